import { describe, expect, it } from 'vitest';
import { SUGGESTION_DISTANCES, checkCredentialTypes, knownTypes, knownTypesOnce, nearestNames, suggestionBudget } from '../../src/domain/credential-types.js';
import { credentialTypeDocuments } from '../../src/jsonld/documents.js';
import { haveIden3Documents, iden3Documents } from '../shared-fixtures.js';

const rule = (type: string, attribute?: string) => ({ id: 'q', query: { type, operator: attribute ? '$eq' : '$noop', ...(attribute && { attribute, value: 1 }) } });
// The bundled contexts plus iden3's KYC contexts handed in as an operator would (JSONLD_DOCUMENTS_FILE).
const bundled = knownTypes(credentialTypeDocuments(iden3Documents()));
const withIden3 = haveIden3Documents();
const check = (type: string, attribute?: string) => checkCredentialTypes([rule(type, attribute)], bundled);

describe.skipIf(!withIden3)('knownTypes of the bundled contexts and iden3\'s handed in', () => {
  it('holds the credential types and not the envelope, proof or status types', () => {
    expect([...bundled.types.keys()]).toEqual(expect.arrayContaining(['IDInformation', 'KYCAgeCredential', 'KYCCountryOfResidenceCredential']));
    for (const t of ['VerifiableCredential', 'BJJSignature2021', 'SparseMerkleTreeProof', 'Iden3SparseMerkleTreeProof']) expect(bundled.types.has(t)).toBe(false);
  });

  it('accepts defined attributes, nested ones, array indexes and the subject id', () => {
    for (const a of ['reviewAnswer', 'personalData.age', 'personalData.countryOfBirth', 'personalData.0.age', 'id']) expect(check('IDInformation', a)).toEqual([]);
    expect(check('KYCAgeCredential', 'birthday')).toEqual([]);
    expect(check('IDInformation')).toEqual([]); // $noop: no attribute
  });
});

describe.skipIf(!withIden3)('checkCredentialTypes', () => {
  it('refuses a type near a known one, naming the nearest', () => {
    for (const typo of ['IDInfo', 'IDInformaton', 'idinformation', 'KYCAgeCredentail']) {
      const [p, ...more] = check(typo);
      expect(more).toEqual([]);
      expect(p!.pointer).toBe('/queryConfigurations/0/query/type');
      expect(p!.message).toMatch(/did you mean (IDInformation|KYCAgeCredential)\?/);
    }
  });

  it('accepts a type far from every known one: its context is one the service does not hold', () => {
    for (const t of ['ProofOfResidence', 'AMLScreeningsResults', 'T', 'VerifiableCredential']) expect(check(t, 'anything.at.all')).toEqual([]);
  });

  it('refuses an unknown attribute of a known type with the nearest known names', () => {
    expect(check('IDInformation', 'personalData.agee')).toEqual([{
      pointer: '/queryConfigurations/0/query/attribute',
      message: expect.stringMatching(/^personalData\.agee is not an attribute of IDInformation: .*did you mean personalData\.age\?$/),
    }]);
    expect(check('IDInformation', 'reviewanswer')[0]!.message).toMatch(/did you mean reviewAnswer\?/);
    expect(check('KYCAgeCredential', 'birthdate')[0]!.message).toMatch(/did you mean birthday\?/);
  });

  it('checks nested paths segment by segment', () => {
    expect(check('IDInformation', 'personalData.firstname')[0]!.message).toMatch(/personalData of IDInformation has no firstname; did you mean personalData\.firstName\?/);
    expect(check('IDInformation', 'personalData.age.years')[0]!.message).toMatch(/personalData\.age is a plain value in IDInformation: it has no attribute years/);
    expect(check('IDInformation', 'personalDta.age')[0]!.message).toMatch(/did you mean personalData\?/);
    // Nothing near: the known names of that level instead.
    expect(check('IDInformation', 'personalData.selfie')[0]!.message).toMatch(/known: personalData\.firstName, personalData\.lastName/);
  });

  it('reads the types of an operator\'s documents (as JSONLD_DOCUMENTS_FILE hands them in)', () => {
    const por = { '@context': [{ '@version': 1.1, ProofOfResidence: { '@id': 'urn:por', '@context': { address: { '@id': 'urn:addr', '@context': { country: { '@id': 'urn:c', '@type': 'xsd:string' } } } } } }] };
    const known = knownTypes(credentialTypeDocuments({ 'https://example.com/por.jsonld': por }));
    expect(checkCredentialTypes([rule('ProofOfResidence', 'address.country')], known)).toEqual([]);
    expect(checkCredentialTypes([rule('ProofOfResidence', 'address.contry')], known)[0]!.message).toMatch(/did you mean address\.country\?/);
    expect(checkCredentialTypes([rule('ProofOfResidense')], known)[0]!.message).toMatch(/did you mean ProofOfResidence\?/);
  });

  it('never throws on documents that are not contexts', () => {
    const odd: Array<[string, unknown]> = [['a', '{not json'], ['b', 5], ['c', { '@context': 'https://remote' }], ['d', { '@context': [{ X: { '@context': 'https://remote' } }] }]];
    const known = knownTypes(odd);
    expect([...known.types.keys()]).toEqual(['X']);
    expect(checkCredentialTypes([rule('X', 'any.path')], known)).toEqual([]); // a context by reference: not checked
  });
});

// Issue 36: suggestions ran a full edit distance of every name against every known one, 204 ms of CPU for one create.
describe.skipIf(!withIden3)('the work of "did you mean" per create', () => {
  const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
  /** A name of n letters, different for each i, made of the letters of the known names. */
  const longName = (i: number, n: number) => Array.from({ length: n }, (_, k) => 'personalDatareviewAnswerfirstName'[(i + k * 7) % 33]).join('') + LETTERS[i % 26];
  const NESTED = ['firstName', 'lastName', 'citizenship', 'country', 'birthDate', 'countryOfBirth'];
  /** A different two-letter typo of a personalData name for each i: every known name of a near length is a candidate. */
  const typo = (i: number) => {
    const name = NESTED[i % NESTED.length]!;
    const at = (Math.floor(i / NESTED.length) % (name.length - 2)) + 1;
    return `${name.slice(0, at)}${LETTERS[i % 26]}${LETTERS[(i * 7 + 3) % 26]}${name.slice(at + 2)}`;
  };
  const create = (f: (i: number) => [string, string]) => Array.from({ length: 256 }, (_, i) => {
    const [type, attribute] = f(i);
    return { id: `q${i}`, query: { type, attribute, operator: '$eq', value: 1 } };
  });

  it('256 long near-miss attributes and types compute no edit distance: no known name is within two edits of their length', () => {
    const bodies: Array<(i: number) => [string, string]> = [(i) => ['IDInformation', longName(i, 255)], (i) => ['IDInformation', `personalData.${longName(i, 242)}`]];
    for (const f of bodies) {
      const budget = suggestionBudget();
      const problems = checkCredentialTypes(create(f), bundled, undefined, budget);
      expect(problems).toHaveLength(256); // each still refused
      expect(budget.distances).toBe(0);
    }
    const budget = suggestionBudget();
    expect(checkCredentialTypes(create((i) => [longName(i, 255), 'age']), bundled, undefined, budget)).toEqual([]); // far from every type: accepted
    expect(budget.distances).toBe(0);
  });

  it(`256 different near-length typos compute at most ${SUGGESTION_DISTANCES} distances; the rules past it are still refused, listing the known names`, () => {
    const budget = suggestionBudget();
    const problems = checkCredentialTypes(create((i) => ['IDInformation', `personalData.${typo(i)}`]), bundled, undefined, budget);
    expect(budget.distances).toBe(SUGGESTION_DISTANCES);
    expect(problems).toHaveLength(256);
    expect(problems[0]!.message).toMatch(/did you mean personalData\.firstName, personalData\.lastName\?$/);
    expect(problems[255]!.message).toMatch(/; known: personalData\.firstName, /);
  });

  it('a name repeated in a create is looked up once', () => {
    const budget = suggestionBudget();
    const problems = checkCredentialTypes(create(() => ['IDInformaton', 'personalData.agee']), bundled, undefined, budget);
    expect(problems).toHaveLength(256);
    expect(problems.every((p) => /did you mean IDInformation\?/.test(p.message))).toBe(true);
    expect(budget.distances).toBeLessThanOrEqual(bundled.types.size);
  });
});

describe('nearestNames', () => {
  it('ranks case, then prefixes, then typos, at most 3', () => {
    expect(nearestNames('age', ['age', 'Age', 'page', 'cage', 'ages', 'x'])).toEqual(['age', 'Age', 'ages']);
    expect(nearestNames('zzz', ['age'])).toEqual([]);
  });
});

describe('knownTypesOnce', () => {
  it('reads and parses the documents on the first check only, not per request', () => {
    let reads = 0;
    const documents = () => {
      reads += 1;
      return credentialTypeDocuments();
    };
    const types = knownTypesOnce(documents);
    for (let i = 0; i < 5; i++) expect(checkCredentialTypes([rule('IDInformation', 'personalData.agee')], types())).toHaveLength(1);
    expect(reads).toBe(1);
    expect(types()).toBe(types());
  });
});
