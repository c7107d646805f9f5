import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // One throwaway PostgreSQL server per run: store tests run on SQLite and PostgreSQL (test/helpers/test-store.ts).
    globalSetup: ["test/helpers/postgres-global-setup.ts"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: "forks",
    fileParallelism: true,
    maxWorkers: 2,
  },
});
