/** Runs every benchmark in bench/ (not part of the test command). */
const suites: string[] = [];
if (suites.length === 0) process.stdout.write("no benchmarks yet\n");
