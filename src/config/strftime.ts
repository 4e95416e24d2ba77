/**
 * Python's datetime.strftime over a local time, for Hydra's `${now:pattern}`: the codes of
 * Python's documentation in the C locale (ROLL writes `${now:%Y%m%d-%H%M%S}`).
 */
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

const pad = (n: number, width = 2, fill = '0') => String(n).padStart(width, fill);

/** Day of the year, 1-based. */
function dayOfYear(d: Date): number {
  return Math.round((Date.UTC(d.getFullYear(), d.getMonth(), d.getDate()) - Date.UTC(d.getFullYear(), 0, 1)) / 86_400_000) + 1;
}

/** Week of the year whose weeks start on `firstDay` (0 Sunday, 1 Monday); days before the first such day are week 0. */
function weekOfYear(d: Date, firstDay: number): number {
  const weekday = (d.getDay() - firstDay + 7) % 7;
  return Math.floor((dayOfYear(d) - 1 - weekday + 7) / 7);
}

/** ISO 8601 year and week (%G, %V). */
function isoWeek(d: Date): { year: number; week: number } {
  const thursday = new Date(d.getFullYear(), d.getMonth(), d.getDate() + 3 - ((d.getDay() + 6) % 7));
  return { year: thursday.getFullYear(), week: Math.floor((dayOfYear(thursday) - 1) / 7) + 1 };
}

function offset(d: Date): string {
  const minutes = -d.getTimezoneOffset();
  const abs = Math.abs(minutes);
  return `${minutes < 0 ? '-' : '+'}${pad(Math.floor(abs / 60))}${pad(abs % 60)}`;
}

function zoneName(d: Date): string {
  return new Intl.DateTimeFormat('en-US', { timeZoneName: 'short' }).formatToParts(d).find((p) => p.type === 'timeZoneName')?.value ?? '';
}

const CODES: Record<string, (d: Date) => string> = {
  a: (d) => DAYS[d.getDay()]!.slice(0, 3),
  A: (d) => DAYS[d.getDay()]!,
  w: (d) => String(d.getDay()),
  u: (d) => String(d.getDay() || 7),
  d: (d) => pad(d.getDate()),
  b: (d) => MONTHS[d.getMonth()]!.slice(0, 3),
  B: (d) => MONTHS[d.getMonth()]!,
  m: (d) => pad(d.getMonth() + 1),
  y: (d) => pad(d.getFullYear() % 100),
  Y: (d) => String(d.getFullYear()),
  H: (d) => pad(d.getHours()),
  I: (d) => pad(d.getHours() % 12 || 12),
  p: (d) => (d.getHours() < 12 ? 'AM' : 'PM'),
  M: (d) => pad(d.getMinutes()),
  S: (d) => pad(d.getSeconds()),
  f: (d) => pad(d.getMilliseconds() * 1000, 6),
  z: offset,
  Z: zoneName,
  j: (d) => pad(dayOfYear(d), 3),
  U: (d) => pad(weekOfYear(d, 0)),
  W: (d) => pad(weekOfYear(d, 1)),
  G: (d) => String(isoWeek(d).year),
  V: (d) => pad(isoWeek(d).week),
  c: (d) => `${CODES.a!(d)} ${CODES.b!(d)} ${pad(d.getDate(), 2, ' ')} ${CODES.H!(d)}:${CODES.M!(d)}:${CODES.S!(d)} ${d.getFullYear()}`,
  x: (d) => `${CODES.m!(d)}/${CODES.d!(d)}/${CODES.y!(d)}`,
  X: (d) => `${CODES.H!(d)}:${CODES.M!(d)}:${CODES.S!(d)}`,
  '%': () => '%',
};

/** `pattern` with each %-code replaced; a code Python does not document throws, naming it. */
export function strftime(pattern: string, date: Date): string {
  return pattern.replace(/%(.?)/gs, (_, code: string) => {
    const format = CODES[code];
    if (!format) throw new Error(code === '' ? 'a pattern cannot end in a lone %' : `%${code} is not a strftime code`);
    return format(date);
  });
}
