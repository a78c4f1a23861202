// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;

/** A verifier that only has the boolean view of the current interface (no getRequestProofStatus). */
contract TestBoolOnlyVerifier {
    mapping(uint256 => mapping(address => bool)) private _verified;

    function setProofVerified(address sender, uint256 requestId) external {
        _verified[requestId][sender] = true;
    }

    function isRequestProofVerified(address sender, uint256 requestId) external view returns (bool) {
        return _verified[requestId][sender];
    }
}

/** A contract that is no verifier at all. */
contract NotAVerifier {
    uint256 public value = 42;
}
