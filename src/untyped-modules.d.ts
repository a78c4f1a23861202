/** Types for the few CommonJS packages without declarations that the service imports, as far as it uses them. */
declare module 'credentials-context' {
  const credentialsContext: { CONTEXT_URL: string; CONTEXT: unknown };
  export default credentialsContext;
}
declare module 'qrcode' {
  const qrcode: { toString(text: string, options: { type: 'terminal'; small?: boolean }): Promise<string> };
  export default qrcode;
}
declare module 'secp256k1/bindings.js' {
  const secp256k1: {
    contextRandomize(seed: Uint8Array): void;
    ecdsaSign(digest: Uint8Array, key: Uint8Array): { signature: Uint8Array; recid: number };
    publicKeyCreate(key: Uint8Array, compressed: boolean): Uint8Array;
  };
  export default secp256k1;
}
