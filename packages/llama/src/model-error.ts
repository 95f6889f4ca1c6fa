import { ForgeError } from '@forge/ir';

/** A model file the runner cannot take, named by the tensor or metadata key at fault; a user's mistake. */
export class ModelError extends ForgeError {
  override readonly name = 'ModelError';
  constructor(
    readonly file: string,
    /** The tensor name or metadata key at fault, or '' for the file as a whole. */
    readonly field: string,
    detail: string,
  ) {
    super(oneLine(`${file}: ${field === '' ? '' : `${shortened(field)}: `}${detail}`));
  }
}

// A key read from a hostile file may be 64 KiB of anything: messages show its start.
const FIELD_CHARACTERS = 120;

function shortened(field: string): string {
  return field.length <= FIELD_CHARACTERS
    ? field
    : `${field.slice(0, FIELD_CHARACTERS)}… (${field.length} characters)`;
}

/** `text` with control characters escaped: names read from a hostile file stay on one line. */
function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(
    /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
