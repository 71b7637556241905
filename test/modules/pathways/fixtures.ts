// Small realistic pathways for the walker's tests: a clinic's booking line
// (greet, qualify, look slots up, branch, book, text, end or transfer).
import type { PathwayDocument } from '../../../src/modules/pathways/schemas.js';

/** greet → qualify → lookup (webhook) → book → confirm (sms) → done; pain → urgent (transfer); no slots → no_slots (end). */
export function clinicPathway(): PathwayDocument {
  return {
    name: 'Bright Dental bookings',
    start: 'greet',
    variables: {
      is_patient: { type: 'boolean', description: 'Whether the caller is already a patient' },
      reason: { type: 'enum', values: ['checkup', 'cleaning', 'pain'] },
      preferred_date: { type: 'date', description: 'The day the caller wants' },
      slot_count: { type: 'number' },
      first_slot: { type: 'string' },
      phone: { type: 'phone' },
      email: { type: 'email' },
    },
    nodes: [
      {
        id: 'greet',
        type: 'conversation',
        say: 'Hello {{contact.name}}, this is Bright Dental. Are you an existing patient?',
        extract: ['is_patient'],
      },
      {
        id: 'qualify',
        type: 'conversation',
        say: 'What can we help with: a checkup, a cleaning, or pain?',
        prompt: 'Find out why {{contact.name}} calls and which day suits them',
        extract: ['reason', 'preferred_date'],
      },
      {
        id: 'lookup',
        type: 'webhook',
        url: 'https://clinic.example.com/slots',
        method: 'POST',
        body: '{"reason": "{{reason}}", "date": "{{preferred_date}}", "patient": {{is_patient}}, "note": "{{contact.fields.note}}"}',
        assign: { slot_count: '$.count', first_slot: '$.slots[0].start' },
      },
      {
        id: 'book',
        type: 'conversation',
        say: 'I can book you for {{first_slot}}. What phone number and email should the confirmation go to?',
        extract: ['phone', 'email'],
      },
      { id: 'confirm', type: 'sms', text: 'Bright Dental: you are booked for {{first_slot}}.' },
      { id: 'done', type: 'end', say: 'You are all set, {{contact.name}}. Goodbye!' },
      { id: 'no_slots', type: 'end', say: 'Sorry, nothing is open on {{preferred_date}}. Goodbye.' },
      { id: 'urgent', type: 'transfer', humanAgentId: 'ha_urgent', say: 'Let me put you through to our urgent line.' },
      { id: 'person', type: 'transfer', say: 'One moment, I will find a receptionist.' },
      { id: 'optout', type: 'end', say: 'Understood, we will not call again.' },
    ],
    edges: [
      { from: 'greet', to: 'qualify' },
      { from: 'qualify', to: 'urgent', if: { var: 'reason', op: 'eq', value: 'pain' } },
      {
        from: 'qualify',
        to: 'person',
        when: 'The caller wants something other than an appointment',
        keywords: ['invoice', 'billing'],
      },
      { from: 'qualify', to: 'lookup' },
      { from: 'lookup', to: 'book', if: { var: 'slot_count', op: 'gt', value: 0 } },
      { from: 'lookup', to: 'no_slots' },
      { from: 'book', to: 'confirm' },
      { from: 'confirm', to: 'done' },
    ],
    global: [
      { to: 'person', when: 'The caller asks for a person', keywords: ['receptionist', 'real person'] },
      { to: 'optout', when: 'The caller asks not to be called again', keywords: ['stop calling'] },
    ],
  };
}

/** Navigates another party's phone menu: digits, a text, then a conversation; `1` on the keypad ends it. */
export function menuPathway(): PathwayDocument {
  return {
    name: 'Pharmacy refill',
    start: 'press',
    variables: { refill_ready: { type: 'boolean' } },
    nodes: [
      { id: 'press', type: 'digits', send: '1w2#' },
      { id: 'notify', type: 'sms', text: 'We are calling the pharmacy for {{contact.name}} at {{now}}.' },
      { id: 'ask', type: 'conversation', say: 'Is the refill for {{contact.name}} ready?', extract: ['refill_ready'] },
      { id: 'thanks', type: 'end', say: 'Thank you!' },
      { id: 'later', type: 'end', say: 'We will call back tomorrow.' },
    ],
    edges: [
      { from: 'press', to: 'notify' },
      { from: 'notify', to: 'ask' },
      { from: 'ask', to: 'thanks', if: { var: 'refill_ready', op: 'eq', value: true } },
      { from: 'ask', to: 'thanks', keywords: ['1'] },
      { from: 'ask', to: 'later', if: { var: 'refill_ready', op: 'eq', value: false } },
    ],
  };
}
