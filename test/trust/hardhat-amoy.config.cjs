// Hardhat 2 configuration of the State contract tests: the in-process network with Polygon Amoy's chain id (80002),
// so that the demo issuers' did:iden3:polygon:amoy DIDs name this chain (@iden3/js-iden3-core's chain id of their network).
module.exports = {
  networks: {
    hardhat: { chainId: 80002, loggingEnabled: false, mining: { auto: true } },
  },
};
