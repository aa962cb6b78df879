import { describe, expect, it } from 'vitest';
import { WalkedJson } from '../../../adapters/sqlite/walked-json';

describe('WalkedJson (system metadata compared without writing it out)', () => {
  const document = {
    propertyKeys: { 'urn:li:structuredProperty:a': 'acd71f99-4ab7-44c3-b520-0d18d0d805c2:', 'urn:li:structuredProperty:b': 'e23f:' },
    propertyStamps: { 'urn:li:structuredProperty:a': { created: { time: 1, actor: 'urn:li:corpuser:x' } } },
    list: [1, 'two', null, true, [3]],
  };
  const copy = () => JSON.parse(JSON.stringify(document)) as typeof document & Record<string, unknown>;

  it('matches a document with the same JSON text, built apart', () => {
    const walked = new WalkedJson(document);
    expect(walked.matches(copy())).toBe(true);
    // Twice in a row: the comparison starts over each time.
    expect(walked.matches(copy())).toBe(true);
    // An undefined member is no member, as in its JSON text.
    expect(walked.matches({ ...copy(), gone: undefined })).toBe(true);
  });

  it('tells apart what has another JSON text', () => {
    const walked = new WalkedJson(document);
    const changed: Array<[string, unknown]> = [];
    const leaf = copy();
    leaf.propertyKeys['urn:li:structuredProperty:b'] = 'e23g:';
    changed.push(['a leaf', leaf]);
    const extra = copy();
    extra.more = 1;
    changed.push(['an extra member', extra]);
    const shorter = copy();
    shorter.list = [1, 'two', null, true];
    changed.push(['a shorter array', shorter]);
    const nested = copy();
    nested.list = [1, 'two', null, true, [3, 4]];
    changed.push(['a longer nested array', nested]);
    const typed = copy();
    typed.list = [1, 'two', null, 'true', [3]];
    changed.push(['a leaf of another type', typed]);
    const { propertyKeys, propertyStamps, list } = copy();
    changed.push(['the same members in another order', { propertyStamps, propertyKeys, list }]);
    changed.push(['an array for an object', { ...copy(), propertyKeys: [] }]);
    changed.push(['a prefix of it', { propertyKeys }]);
    changed.push(['a member under another name', { propertyKeys, propertyStamps, other: list }]);
    for (const [what, value] of changed) expect({ what, matches: walked.matches(value) }).toEqual({ what, matches: false });
  });

  it('never matches through an object that is not plain (its JSON text is its toJSON)', () => {
    const stamped = { at: new Date(0) };
    expect(new WalkedJson(stamped).matches({ at: new Date(0) })).toBe(false);
    expect(new WalkedJson({ at: {} }).matches({ at: new Date(0) })).toBe(false);
  });
});
