/**
 * The DID of the demo issuer (src/trust/demo-issuer.ts) made from its default seed, the one `DEMO_ISSUER=1` answers
 * for and `node dist/scripts/demo-credentials.js` signs with. Written out, in a module of its own, so that the start-up
 * line can name it without loading the iden3 libraries; test/trust/demo.test.ts checks it is the DID they make.
 */
export const DEMO_ISSUER_DID = 'did:iden3:polygon:amoy:x9GjpMsjNkcHtSoWMdvhbhZrmXfH1tk9RxjSx8FXa';
