// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;

/**
 * A state-transition verifier that accepts every proof: the iden3 State contract asks it to verify the Groth16 proof of
 * each transition, and the trust tests publish issuer states without proving them (what is tested is reading them).
 */
contract TestStateTransitionVerifier {
    function verifyProof(uint256[2] calldata, uint256[2][2] calldata, uint256[2] calldata, uint256[4] calldata) external pure returns (bool) {
        return true;
    }
}
