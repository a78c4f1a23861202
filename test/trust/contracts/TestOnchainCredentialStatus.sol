// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// A stand-in for an on-chain issuer's IOnchainCredentialStatusResolver (iden3 contracts): it answers the statuses
/// the test stores (taken from a real demo issuer's trees), like IdentityBase does from its own trees: the issuer's
/// latest state (getRevocationStatus) or a given state (getRevocationStatusByIdAndState); unknown identity or state
/// reverts. Siblings are stored padded to the tree's maximum depth, as the real contract answers them.
contract TestOnchainCredentialStatus {
    struct IdentityStateRoots {
        uint256 state;
        uint256 claimsTreeRoot;
        uint256 revocationTreeRoot;
        uint256 rootOfRoots;
    }

    struct Proof {
        uint256 root;
        bool existence;
        uint256[] siblings;
        uint256 index;
        uint256 value;
        bool auxExistence;
        uint256 auxIndex;
        uint256 auxValue;
    }

    struct CredentialStatus {
        IdentityStateRoots issuer;
        Proof mtp;
    }

    uint256 public identity;
    uint256 public latestState;
    mapping(uint256 => mapping(uint64 => CredentialStatus)) private statuses; // state => nonce => status
    mapping(uint256 => mapping(uint64 => bool)) private known;

    constructor(uint256 id) {
        identity = id;
    }

    function setStatus(uint64 nonce, CredentialStatus calldata status, bool latest) external {
        uint256 state = status.issuer.state;
        statuses[state][nonce] = status;
        known[state][nonce] = true;
        if (latest) latestState = state;
    }

    function getRevocationStatus(uint256 id, uint64 nonce) external view returns (CredentialStatus memory) {
        require(id == identity, "Identity does not exist");
        require(latestState != 0, "Identity does not exist");
        return getRevocationStatusByIdAndState(id, latestState, nonce);
    }

    function getRevocationStatusByIdAndState(uint256 id, uint256 state, uint64 nonce) public view returns (CredentialStatus memory) {
        require(id == identity, "Identity does not exist");
        require(known[state][nonce], "State does not exist");
        return statuses[state][nonce];
    }
}
