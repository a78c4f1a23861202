// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

/**
 * A reference contract guarding a function with the Scenario Compliance Service's EIP-712 attestations
 * (`POST /compliance/scenarios/execute?attest=eip712&chainId=...&verifyingContract=<this contract>`).
 *
 * The caller passes the attestation's expiry, nonce and signature; the rest of the signed struct is what the contract
 * requires: the subject is msg.sender, the scenario is this contract's, the verdict is passed (1). A signature over
 * anything else recovers another address, which no allow-list holds. Each nonce is accepted once.
 */
contract ComplianceGate {
    bytes32 private constant ATTESTATION_TYPEHASH =
        keccak256("Attestation(address subject,bytes32 scenario,uint8 verdict,uint64 expiry,uint256 nonce)");
    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    uint8 private constant PASSED = 1;
    /// secp256k1 n / 2: a larger s is the malleable twin of a valid signature.
    uint256 private constant HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0;

    /// The scenario whose passing this contract requires: keccak256(abi.encode(projectId, scenarioId)), both strings,
    /// projectId "" for a scenario without a project. The project is part of it: scenario ids are unique per project
    /// only, and another project's scenario of the same id must not pass this gate.
    bytes32 public immutable scenario;
    bytes32 private immutable domainSeparator;
    uint256 private immutable deployedChainId;

    address public owner;
    /// The service's signing addresses (ATTESTATION_EIP712_KEY): several while a key is rotated.
    mapping(address => bool) public signers;
    /// Nonces already used: an attestation is good for one call.
    mapping(uint256 => bool) public usedNonces;
    uint256 public calls;

    error NotOwner();
    error AttestationExpired();
    error NonceUsed();
    error BadSignature();
    error SignerNotAllowed();

    event SignerSet(address indexed signer, bool allowed);
    event Guarded(address indexed caller);

    constructor(bytes32 scenario_, address signer) {
        scenario = scenario_;
        owner = msg.sender;
        signers[signer] = true;
        deployedChainId = block.chainid;
        domainSeparator = _domainSeparator();
        emit SignerSet(signer, true);
    }

    function setSigner(address signer, bool allowed) external {
        if (msg.sender != owner) revert NotOwner();
        signers[signer] = allowed;
        emit SignerSet(signer, allowed);
    }

    function _domainSeparator() private view returns (bytes32) {
        return keccak256(abi.encode(
            DOMAIN_TYPEHASH, keccak256("ScenarioComplianceService"), keccak256("1"), block.chainid, address(this)));
    }

    /// Reverts unless (expiry, nonce, signature) is an unused, unexpired attestation that msg.sender passed `scenario`.
    modifier onlyCompliant(uint64 expiry, uint256 nonce, bytes calldata signature) {
        if (block.timestamp > expiry) revert AttestationExpired();
        if (usedNonces[nonce]) revert NonceUsed();
        usedNonces[nonce] = true;
        bytes32 structHash = keccak256(abi.encode(ATTESTATION_TYPEHASH, msg.sender, scenario, PASSED, expiry, nonce));
        bytes32 separator = block.chainid == deployedChainId ? domainSeparator : _domainSeparator();
        bytes32 digest = keccak256(abi.encodePacked(hex"1901", separator, structHash));
        if (signature.length != 65) revert BadSignature();
        bytes32 r;
        bytes32 s;
        uint8 v;
        assembly {
            r := calldataload(signature.offset)
            s := calldataload(add(signature.offset, 32))
            v := byte(0, calldataload(add(signature.offset, 64)))
        }
        if (uint256(s) > HALF_N) revert BadSignature();
        address signer = ecrecover(digest, v, r, s);
        if (signer == address(0)) revert BadSignature();
        if (!signers[signer]) revert SignerNotAllowed();
        _;
    }

    /// The guarded function: what a dApp lets only compliant addresses do (mint, deposit, trade...).
    function guarded(uint64 expiry, uint256 nonce, bytes calldata signature) external onlyCompliant(expiry, nonce, signature) {
        calls += 1;
        emit Guarded(msg.sender);
    }

    /// The same work unguarded: the baseline that measures what the check costs.
    function unguarded(uint64, uint256, bytes calldata) external {
        calls += 1;
        emit Guarded(msg.sender);
    }
}
