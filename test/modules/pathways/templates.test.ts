// `{{name}}` templates: what fillTemplate fills, what it leaves empty and lists.
import { describe, expect, it } from 'vitest';
import { fillTemplate, isCallName, templateNames } from '../../../src/modules/pathways/templates.js';

const now = Date.parse('2026-11-23T10:00:00.250Z');

describe('fillTemplate', () => {
  it('fills variables, the contact and now', () => {
    const filled = fillTemplate(
      'Hi {{contact.name}} ({{ contact.phone }}) of {{contact.fields.company}}: order {{order}} of {{count}} items, paid {{paid}}, at {{now}}',
      {
        variables: { order: 'A-17', count: 3, paid: true },
        contact: { name: 'Ada', phone: '+14155550123', fields: { company: 'Acme' } },
        now,
      },
    );
    expect(filled).toEqual({
      text: 'Hi Ada (+14155550123) of Acme: order A-17 of 3 items, paid true, at 2026-11-23T10:00:00Z',
      unknown: [],
    });
  });

  it('leaves unknown names empty and lists each once', () => {
    const filled = fillTemplate('{{a}}-{{b}}-{{a}}-{{contact.fields.x}}-{{contact.name}}-{{empty}}-{{gone}}', {
      variables: { b: 'B', empty: '', gone: null },
      now,
      contact: null,
    });
    expect(filled).toEqual({ text: '-B-----', unknown: ['a', 'contact.fields.x', 'contact.name', 'empty', 'gone'] });
  });

  it('does not read inherited properties as variables or contact fields', () => {
    const filled = fillTemplate('{{constructor}}{{toString}}{{contact.fields.constructor}}', {
      variables: {},
      contact: { fields: {} },
      now,
    });
    expect(filled).toEqual({ text: '', unknown: ['constructor', 'toString', 'contact.fields.constructor'] });
  });

  it('writes lists and objects as JSON, and escapes for a JSON string when asked', () => {
    const context = { variables: { tags: ['a', 'b'], name: 'Ann "the" O\'Neil\n' }, now };
    expect(fillTemplate('{{tags}}', context).text).toBe('["a","b"]');
    const body = fillTemplate('{"name": "{{name}}"}', context, { escape: 'json' }).text;
    expect(JSON.parse(body)).toEqual({ name: 'Ann "the" O\'Neil\n' });
  });

  it('leaves text without placeholders, and single braces, alone', () => {
    expect(fillTemplate('a {b} {{ }} c', { variables: {}, now })).toEqual({ text: 'a {b} {{ }} c', unknown: [] });
    expect(fillTemplate('plain', { variables: {}, now })).toEqual({ text: 'plain', unknown: [] });
  });
});

describe('templateNames and isCallName', () => {
  it('lists the names of a text once each, in order', () => {
    expect(templateNames('{{b}} {{ a }} {{b}} {{contact.name}}')).toEqual(['b', 'a', 'contact.name']);
  });

  it('knows the names every call fills', () => {
    expect(['now', 'contact.name', 'contact.phone', 'contact.fields.plan'].every(isCallName)).toBe(true);
    expect(['contact', 'contact.email', 'contact.fields.', 'city'].some(isCallName)).toBe(false);
  });
});
