// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;

/**
 * Test double of the current iden3 UniversalVerifier (iden3 contracts 3.x, Verifier.sol): the same view functions,
 * struct, custom error and event, without the ZK machinery. `submitResponse` stands in for a verified proof
 * submission by msg.sender; `setProofVerified` lets the owner mark (or unmark) a proof for any address.
 */
contract TestUniversalVerifier {
    struct RequestProofStatus {
        uint256 requestId;
        bool isVerified;
        string validatorVersion;
        uint256 timestamp;
    }

    error RequestIdNotFound(uint256 requestId);

    event RequestSet(uint256 indexed requestId, address indexed creator, string metadata, address validator, bytes params);
    event ResponseSubmitted(uint256 indexed requestId, address indexed caller);

    address public immutable owner;
    mapping(uint256 => bool) private _requests;
    mapping(uint256 => mapping(address => RequestProofStatus)) private _proofs;

    constructor() {
        owner = msg.sender;
    }

    modifier checkRequestExistence(uint256 requestId) {
        if (!_requests[requestId]) revert RequestIdNotFound(requestId);
        _;
    }

    function setRequest(uint256 requestId) external {
        require(msg.sender == owner, "not owner");
        _requests[requestId] = true;
        emit RequestSet(requestId, msg.sender, "", address(0), "");
    }

    function submitResponse(uint256 requestId) external checkRequestExistence(requestId) {
        _proofs[requestId][msg.sender] = RequestProofStatus(requestId, true, "test-1.0.0", block.timestamp);
        emit ResponseSubmitted(requestId, msg.sender);
    }

    function setProofVerified(address sender, uint256 requestId, bool verified) external checkRequestExistence(requestId) {
        require(msg.sender == owner, "not owner");
        _proofs[requestId][sender] = RequestProofStatus(requestId, verified, verified ? "test-1.0.0" : "", verified ? block.timestamp : 0);
        if (verified) emit ResponseSubmitted(requestId, sender);
    }

    function isRequestProofVerified(address sender, uint256 requestId) external view checkRequestExistence(requestId) returns (bool) {
        return _proofs[requestId][sender].isVerified;
    }

    function getRequestProofStatus(address sender, uint256 requestId)
        external
        view
        checkRequestExistence(requestId)
        returns (RequestProofStatus memory)
    {
        RequestProofStatus memory s = _proofs[requestId][sender];
        if (!s.isVerified) return RequestProofStatus(requestId, false, "", 0);
        return s;
    }
}
