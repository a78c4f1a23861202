// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;

/**
 * A request validator that is not one of iden3's credential validators: its params are its own (here: anything) and it
 * accepts every response, naming the sender's address as the user. The UniversalVerifier takes it (it says it supports
 * IRequestValidator); the service cannot read its params as a credential query.
 */
contract TestCustomValidator {
    struct ResponseField {
        string name;
        uint256 value;
        bytes rawValue;
    }

    struct RequestParam {
        string name;
        uint256 value;
    }

    function supportsInterface(bytes4) external pure returns (bool) {
        return true;
    }

    function version() external pure returns (string memory) {
        return "custom-1";
    }

    function inputIndexOf(string memory) external pure returns (uint256) {
        return 0;
    }

    function getRequestParam(bytes calldata, string memory name) external pure returns (RequestParam memory) {
        return RequestParam(name, 0);
    }

    function verify(address sender, bytes calldata, bytes calldata, bytes calldata) external pure returns (ResponseField[] memory f) {
        f = new ResponseField[](1);
        f[0] = ResponseField("userID", uint256(uint160(sender)), "");
    }
}
