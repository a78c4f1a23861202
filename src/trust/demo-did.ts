/** Spares loading iden3. */
export const DEMO_ISSUER_DID = 'did:iden3:polygon:amoy:x9GjpMsjNkcHtSoWMdvhbhZrmXfH1tk9RxjSx8FXa';
