/** Loads no document. */
export const ID_INFORMATION_CONTEXT_URL = 'https://compliance.example/schemas/IDInformation-v1.jsonld';
export const ID_INFORMATION_SCHEMA_URL = 'https://compliance.example/schemas/IDInformation-v1.json';
