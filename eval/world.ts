/**
 * The seeded task world of the efficacy harness. Task families recur with a skewed
 * distribution; each family hides traps, and a task succeeds only when the answer
 * applies every trap's remedy (a programmatic check on the text the user sees). The
 * scripted user reveals a trap's remedy after a failure with some probability: that is
 * the evidence the distiller should capture. Settings are fixed here and in README.md.
 */
export const WORLD = {
  tasks: 400,
  seeds: 20,
  window: 50,
  luck: 0.25,
  follow: 0.9,
  cite: 0.85,
  /** Probability the user reveals a failed trap's remedy in the next message. */
  reveal: 0.5,
  /** Probability the agent cites a lesson it was never shown. */
  falseCitation: 0.03,
  /** Probability the agent obeys an instruction hidden in a lesson (and fails the task). */
  obeyInstruction: 0.5,
  /** Chance of a distracted answer per 100 characters of lesson text in the prompt. */
  lengthPenaltyPer100Chars: 0.004,
  /** Zipf exponent of how often families recur. */
  skew: 0.9,
} as const;

export type Trap = { topic: string; remedy: string; wrong: string };
export type Family = { name: string; slug: string; traps: Trap[] };

export const FAMILIES: Family[] = [
  family("deploy gateway", [
    ["tls handshake", "--force-tls", "--plain-tls"],
    ["health probe", "--probe-port=8443", "--probe-port=80"],
  ]),
  family("backup database", [["lock wait", "--single-transaction", "--lock-tables"]]),
  family("rotate certificates", [["chain order", "--full-chain", "--leaf-only"]]),
  family("build image", [
    ["layer cache", "--no-cache", "--cache-from=latest"],
    ["base pull", "--pull", "--offline"],
  ]),
  family("migrate schema", [["dry run", "--dry-run=false", "--dry-run=true"]]),
  family("export report", []),
  family("sync mirror", [["partial files", "--delete-delay", "--delete-before"]]),
  family("restart worker", [["drain queue", "--graceful=30s", "--graceful=0s"]]),
];

function family(name: string, traps: [string, string, string][]): Family {
  return {
    name,
    slug: name.replace(/\s+/g, "-"),
    traps: traps.map(([topic, remedy, wrong]) => ({ topic, remedy, wrong })),
  };
}

export type Task = { index: number; family: Family; text: string };

/** Deterministic uniform numbers from a seed and a path of integers (mulberry32 over a mixed key). */
export function uniform(...key: number[]): number {
  let state = 0x9e3779b9;
  for (const part of key) state = Math.imul(state ^ (part + 0x7f4a7c15), 0x85ebca6b) ^ (state >>> 13);
  state = (state + 0x6d2b79f5) | 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
}

const PROJECTS = ["atlas", "borealis", "cinder", "delta", "ember", "fjord", "garnet", "harbor"];

export function taskStream(seed: number, count: number = WORLD.tasks): Task[] {
  const weights = FAMILIES.map((_, rank) => 1 / (rank + 1) ** WORLD.skew);
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  return Array.from({ length: count }, (_, index) => {
    let pick = uniform(seed, index, 1) * total;
    let chosen = FAMILIES.length - 1;
    for (let rank = 0; rank < weights.length; rank += 1) {
      pick -= weights[rank] as number;
      if (pick < 0) {
        chosen = rank;
        break;
      }
    }
    const familyOf = FAMILIES[chosen] as Family;
    const project = PROJECTS[Math.floor(uniform(seed, index, 2) * PROJECTS.length)] as string;
    return {
      index,
      family: familyOf,
      text: `Please ${familyOf.name} for project ${project} (ticket ${seed}-${index}).`,
    };
  });
}

/** The programmatic success check: every trap's remedy applied, no wrong one. */
export function succeeded(task: Task, answer: string): boolean {
  return task.family.traps.every((trap) => answer.includes(trap.remedy) && !answer.includes(trap.wrong));
}

export function failedTraps(task: Task, answer: string): Trap[] {
  return task.family.traps.filter((trap) => !answer.includes(trap.remedy) || answer.includes(trap.wrong));
}

export function correctionText(task: Task, trap: Trap): string {
  return `No, that's wrong: for ${task.family.name}, the ${trap.topic} needs ${trap.remedy}.`;
}

export function lessonFor(family: Family, trap: Trap, remedy: string = trap.remedy): string {
  return `For ${family.name}, the ${trap.topic} needs ${remedy}; without it the step fails.`;
}
