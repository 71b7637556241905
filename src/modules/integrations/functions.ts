// The functions a scheduling integration gives an agent during a call
// (DESIGN "Calls": each integration as functions). Parameters are JSON
// Schema (TypeBox), so the call assembler can hand them to a model as tools.
import { type Static, Type } from 'typebox';

export const CheckAvailabilityArgs = Type.Object(
  {
    start_date: Type.Optional(
      Type.String({ format: 'date', description: 'First day to look at (YYYY-MM-DD, UTC); today when omitted' }),
    ),
    days: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 7, description: 'How many days to look at (1–7, default 3)' }),
    ),
  },
  { additionalProperties: false },
);
export type CheckAvailabilityArgs = Static<typeof CheckAvailabilityArgs>;

export const BookMeetingArgs = Type.Object(
  {
    start_time: Type.String({
      format: 'date-time',
      description: 'Start of an available slot from check_availability (ISO 8601)',
    }),
    // Optional: on a phone call the caller's email is seldom known; the link then asks for it.
    name: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: "The invitee's full name, when known" }),
    ),
    email: Type.Optional(
      Type.String({ format: 'email', maxLength: 254, description: "The invitee's email address, when known" }),
    ),
  },
  { additionalProperties: false },
);
export type BookMeetingArgs = Static<typeof BookMeetingArgs>;

export const SCHEDULING_FUNCTIONS = {
  check_availability: {
    description: 'List open meeting slots of the connected calendar (times in UTC).',
    parameters: CheckAvailabilityArgs,
  },
  book_meeting: {
    description:
      'Book one open slot for the contact: checks the slot is still free and returns a single-use booking link prefilled with their name and email.',
    parameters: BookMeetingArgs,
  },
} as const;

export type SchedulingFunctionName = keyof typeof SCHEDULING_FUNCTIONS;

/** One function as the call assembler sees it. */
export interface IntegrationFunction {
  /** Unique within one call: `check_availability`, then `check_availability_2` for a second integration of the same type. */
  name: string;
  /** The function to pass to invoke(). */
  function: SchedulingFunctionName;
  integrationId: string;
  type: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}
