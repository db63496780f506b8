/**
 * The soft limit on open files of this process (Node raises it to the hard limit when it starts), from the
 * diagnostic report's getrlimit; undefined when the platform does not say or there is no limit.
 */
export function openFileLimit(): number | undefined {
  const report = process.report?.getReport() as { userLimits?: { open_files?: { soft?: unknown } } } | undefined;
  const soft = report?.userLimits?.open_files?.soft;
  return typeof soft === 'number' && soft > 0 ? soft : undefined;
}
