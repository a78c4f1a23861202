/** The URLs of the JSON-LD documents this project wrote (src/jsonld/documents/), importable without loading them. */
export const ID_INFORMATION_CONTEXT_URL = 'https://compliance.example/schemas/IDInformation-v1.jsonld';
export const ID_INFORMATION_SCHEMA_URL = 'https://compliance.example/schemas/IDInformation-v1.json';
