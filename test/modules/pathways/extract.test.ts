// The sandbox walk's readers of a caller's words: keywords and a value of
// every variable type.
import { describe, expect, it } from 'vitest';
import {
  booleanIn,
  emailIn,
  enumIn,
  extractValue,
  keywordsOccur,
  numberIn,
  phoneIn,
} from '../../../src/modules/pathways/extract.js';

// Monday 23 November 2026.
const NOW = Date.parse('2026-11-23T10:00:00Z');

describe('keywordsOccur', () => {
  it('matches whole words and phrases, case-insensitively', () => {
    expect(keywordsOccur(['agent'], 'Can I talk to an AGENT, please?')).toBe(true);
    expect(keywordsOccur(['agent'], 'the agents are busy')).toBe(false);
    expect(keywordsOccur(['real person'], 'a real   person please')).toBe(true);
    expect(keywordsOccur(['real person'], 'a person for real')).toBe(false);
    expect(keywordsOccur(["don't call"], 'Please don\u2019t call again')).toBe(true);
    expect(keywordsOccur(['c++'], 'I code in C++ mostly')).toBe(true);
  });

  it('matches keypad digits as words', () => {
    expect(keywordsOccur(['1'], '1')).toBe(true);
    expect(keywordsOccur(['1'], '12')).toBe(false);
    expect(keywordsOccur(['#'], '#')).toBe(true);
  });
});

describe('numberIn', () => {
  it('reads digits first, then number words up to the hundreds', () => {
    expect(numberIn('table for 4 please')).toBe(4);
    expect(numberIn('about 1,250.5 dollars')).toBe(1250.5);
    expect(numberIn('minus -3')).toBe(-3);
    expect(numberIn('twenty-five')).toBe(25);
    expect(numberIn('we are twenty five people')).toBe(25);
    expect(numberIn('ninety nine')).toBe(99);
    expect(numberIn('thirteen')).toBe(13);
    expect(numberIn('zero')).toBe(0);
    expect(numberIn('three hundred and two')).toBe(302);
    expect(numberIn('two hundred')).toBe(200);
    expect(numberIn('forty')).toBe(40);
    expect(numberIn('none of them')).toBeNull();
  });
});

describe('phoneIn', () => {
  it('reads E.164, national digits and spoken digits', () => {
    expect(phoneIn('it is +44 20 7946 0958')).toBe('+442079460958');
    expect(phoneIn('415-555-0123')).toBe('+14155550123');
    expect(phoneIn('1 415 555 0123')).toBe('+14155550123');
    expect(phoneIn('four one five, five five five, oh one two three')).toBe('+14155550123');
    expect(phoneIn('four one five triple five zero one two three')).toBe('+14155550123');
    expect(phoneIn('plus four four two zero seven nine four six zero nine five eight')).toBe('+442079460958');
    expect(phoneIn('five five five')).toBeNull();
    expect(phoneIn('no phone')).toBeNull();
  });
});

describe('emailIn', () => {
  it('reads a written address and a spoken one', () => {
    expect(emailIn('it is Ada.Lovelace@Example.com.')).toBe('ada.lovelace@example.com');
    expect(emailIn('ada dot lovelace at example dot com')).toBe('ada.lovelace@example.com');
    expect(emailIn('write to me at ada underscore l at mail dot example dot org')).toBe('ada_l@mail.example.org');
    expect(emailIn('ada dash l at example dot co dot uk please')).toBe('ada-l@example.co.uk');
    expect(emailIn('I am at home')).toBeNull();
  });
});

describe('booleanIn', () => {
  it('reads yes and no words; the first said wins', () => {
    for (const yes of ['Yes', 'yeah sure', 'that is correct', 'of course', 'OK']) expect(booleanIn(yes)).toBe(true);
    for (const no of ['No', 'nope', 'not really', "I don't think so", 'that is wrong'])
      expect(booleanIn(no)).toBe(false);
    expect(booleanIn('no, wait, yes')).toBe(false);
    expect(booleanIn('yes, not now')).toBe(true);
    expect(booleanIn('maybe')).toBeNull();
    expect(booleanIn('nobody knows')).toBeNull();
  });
});

describe('enumIn', () => {
  it('finds the value named, the first said, _ heard as a space', () => {
    expect(enumIn(['checkup', 'cleaning', 'pain'], 'a Cleaning please')).toBe('cleaning');
    expect(enumIn(['checkup', 'cleaning'], 'cleaning, or a checkup')).toBe('cleaning');
    expect(enumIn(['next_week', 'this_week'], 'sometime next week')).toBe('next_week');
    expect(enumIn(['pro', 'pro plus'], 'the pro plus plan')).toBe('pro plus');
    expect(enumIn(['pain'], 'painting')).toBeNull();
  });
});

describe('extractValue', () => {
  it('reads every type, dates by the sandbox engine day words', () => {
    expect(extractValue({ type: 'date' }, 'next Tuesday would be good', NOW)).toBe('2026-11-24');
    expect(extractValue({ type: 'date' }, 'tomorrow', NOW)).toBe('2026-11-24');
    expect(extractValue({ type: 'date' }, 'on 2026-12-01', NOW)).toBe('2026-12-01');
    expect(extractValue({ type: 'date' }, 'whenever', NOW)).toBeNull();
    expect(extractValue({ type: 'number' }, 'two', NOW)).toBe(2);
    expect(extractValue({ type: 'boolean' }, 'yep', NOW)).toBe(true);
    expect(extractValue({ type: 'phone' }, '415 555 0123', NOW)).toBe('+14155550123');
    expect(extractValue({ type: 'email' }, 'ada at example dot com', NOW)).toBe('ada@example.com');
    expect(extractValue({ type: 'enum', values: ['Basic', 'Pro'] }, 'pro', NOW)).toBe('Pro');
    expect(extractValue({ type: 'string' }, '  Ada Lovelace  ', NOW)).toBe('Ada Lovelace');
    expect(extractValue({ type: 'string' }, '   ', NOW)).toBeNull();
  });
});
