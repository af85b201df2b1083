import type { ModelRequest, ToolCall } from './types.js';

/**
 * Simulated models (`sim:<profile>`) are deterministic stand-ins for offline
 * demos and tests. They measure nothing: every answer is a pure function of
 * the request and a seed. Each audit registers its own profiles (with planted
 * ground truth) here; the `sim:` adapter looks them up by name.
 */
export interface SimAnswer {
  text: string;
  reasoning?: string;
  /** Simulated tool calls (profiles that answer requests offering tools). */
  toolCalls?: ToolCall[];
}

export interface SimProfile {
  name: string;
  /** One line saying what the profile simulates and what it plants. */
  description: string;
  answer(request: ModelRequest, seed: number): SimAnswer;
}

const profiles = new Map<string, SimProfile>();

export function registerSimProfile(profile: SimProfile): void {
  profiles.set(profile.name, profile);
}

export function getSimProfile(name: string): SimProfile | undefined {
  return profiles.get(name);
}

export function listSimProfiles(): SimProfile[] {
  return [...profiles.values()].sort((a, b) => a.name.localeCompare(b.name));
}
