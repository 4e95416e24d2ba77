/** The line that ends a test run whose tests skipped for missing system tools (test/system_tools.ts, scripts/test.ts). */
export function skippedLine(packages: readonly string[]): string {
  return `skipped tests: ${packages.join(', ')} not installed (apt-get install ${packages.join(' ')}); CI installs them, and there a missing one fails`;
}
