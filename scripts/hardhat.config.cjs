// Hardhat 2 configuration of `npm run demo:onchain`: only the in-process network is used (no compilation, no download).
module.exports = {
  networks: {
    hardhat: { chainId: 31337, loggingEnabled: false, mining: { auto: true } },
  },
};
