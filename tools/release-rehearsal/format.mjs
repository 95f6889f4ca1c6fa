// How the rehearsal prints durations, sizes, commands and the tail of a command's output.

export const seconds = (since) => ((Date.now() - since) / 1000).toFixed(1);

/** `argument` as a shell would need it, to print a command that can be pasted. */
export function quote(argument) {
  return /^[\w@%+=:,./-]+$/.test(argument) ? argument : `'${argument.replaceAll("'", "'\\''")}'`;
}

/** The last `lines` lines of `text`, indented as a quote. */
export function tail(text, lines = 40) {
  const all = text.replace(/\s+$/, '').split('\n');
  const kept = all.slice(-lines);
  const skipped = all.length - kept.length;
  return [...(skipped > 0 ? [`(${skipped} earlier lines left out)`] : []), ...kept]
    .map((line) => `  | ${line}`)
    .join('\n');
}

export function kilobytes(bytes) {
  return bytes >= 10 * 1024 * 1024
    ? `${(bytes / 1024 / 1024).toFixed(0)} MB`
    : bytes >= 1024 * 1024
      ? `${(bytes / 1024 / 1024).toFixed(1)} MB`
      : `${(bytes / 1024).toFixed(1)} kB`;
}
