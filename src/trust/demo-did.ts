/** Written out so that the start-up line can name it without loading the iden3 libraries (test/trust/demo.test.ts). */
export const DEMO_ISSUER_DID = 'did:iden3:polygon:amoy:x9GjpMsjNkcHtSoWMdvhbhZrmXfH1tk9RxjSx8FXa';
