// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;

/**
 * The aggregate3 and getBlockNumber functions of Multicall3 (same ABI as the canonical contract at
 * 0xcA11bde05977b3631167028862bE2a173976CA11); the tests put its runtime code at that address.
 */
contract TestMulticall3 {
    struct Call3 {
        address target;
        bool allowFailure;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    function aggregate3(Call3[] calldata calls) public payable returns (Result[] memory returnData) {
        uint256 length = calls.length;
        returnData = new Result[](length);
        for (uint256 i = 0; i < length; i++) {
            (bool ok, bytes memory ret) = calls[i].target.call(calls[i].callData);
            require(ok || calls[i].allowFailure, "Multicall3: call failed");
            returnData[i] = Result(ok, ret);
        }
    }

    function getBlockNumber() public view returns (uint256 blockNumber) {
        blockNumber = block.number;
    }
}
