/** Types for the few CommonJS packages without declarations that the service imports, as far as it uses them. */
declare module 'credentials-context' {
  const credentialsContext: { CONTEXT_URL: string; CONTEXT: unknown };
  export default credentialsContext;
}
declare module 'qrcode' {
  const qrcode: { toString(text: string, options: { type: 'terminal'; small?: boolean }): Promise<string> };
  export default qrcode;
}
