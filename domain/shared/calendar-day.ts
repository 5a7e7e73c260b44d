// Calendar days as the API writes them: `YYYY-MM-DD`, a day of UTC.

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** Whether `day` is `YYYY-MM-DD` naming a real day (Date.parse rolls 2026-02-30 over into March; the day then reads back differently). */
export function isCalendarDay(day: string): boolean {
  if (!DAY.test(day)) return false;
  const at = Date.parse(`${day}T00:00:00Z`);
  return !Number.isNaN(at) && new Date(at).toISOString().slice(0, 10) === day;
}
