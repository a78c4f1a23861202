// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;

/**
 * Test double of the older iden3 ZKPVerifier / UniversalVerifier 1.x (ZKPVerifierBase.sol): uint64 request ids,
 * isProofVerified / getProofStatus, a string revert for unknown requests and the ZKPResponseSubmitted event.
 */
contract TestLegacyZKPVerifier {
    struct ProofStatus {
        bool isVerified;
        string validatorVersion;
        uint256 blockNumber;
        uint256 blockTimestamp;
    }

    event ZKPRequestSet(uint64 indexed requestId, address indexed requestOwner, string metadata, address validator, bytes data);
    event ZKPResponseSubmitted(uint64 indexed requestId, address indexed caller);

    mapping(uint64 => bool) private _requests;
    mapping(address => mapping(uint64 => ProofStatus)) private _proofs;

    modifier checkRequestExistence(uint64 requestId) {
        require(_requests[requestId], "request id doesn't exist");
        _;
    }

    function setZKPRequest(uint64 requestId) external {
        _requests[requestId] = true;
        emit ZKPRequestSet(requestId, msg.sender, "", address(0), "");
    }

    function submitZKPResponse(uint64 requestId) external checkRequestExistence(requestId) {
        _proofs[msg.sender][requestId] = ProofStatus(true, "test-0.9.0", block.number, block.timestamp);
        emit ZKPResponseSubmitted(requestId, msg.sender);
    }

    function isProofVerified(address sender, uint64 requestId) external view checkRequestExistence(requestId) returns (bool) {
        return _proofs[sender][requestId].isVerified;
    }

    function getProofStatus(address sender, uint64 requestId) external view checkRequestExistence(requestId) returns (ProofStatus memory) {
        return _proofs[sender][requestId];
    }
}
