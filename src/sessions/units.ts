import type { Session } from './types.js';

/**
 * Sessions that are one conversation: a fork and the session it was forked from, a file that
 * continues another file's conversation, or two files that open with the same exchange (a
 * copy, or a fork whose ids were rewritten). Their histories coincide up to the fork point, so
 * as units of inference they are not independent: an audit merges each family into one unit
 * and says so (docs/statistics.md, "Units share no draws"). Pure.
 */

export interface SessionFamily {
  /** The unit's name: its first member's label. */
  unit: string;
  /** Member labels, in input order. */
  members: string[];
  /** Why members were joined: `"S5 fork of S1"`. */
  reasons: string[];
}

export interface LabelledSession {
  label: string;
  session: Pick<Session, 'id' | 'tool' | 'forkedFrom' | 'continuesFrom' | 'leafUuid' | 'messages' | 'file'>;
}

/** Union-find over labels, keeping the earliest label as the root (so a unit is named by its first member). */
export class UnitMerger {
  private readonly parent = new Map<string, string>();
  private readonly order = new Map<string, number>();
  private readonly reasons: string[] = [];

  constructor(labels: readonly string[]) {
    labels.forEach((label, index) => {
      this.parent.set(label, label);
      this.order.set(label, index);
    });
  }

  find(label: string): string {
    let root = label;
    while (this.parent.get(root) !== root) root = this.parent.get(root) as string;
    return root;
  }

  join(a: string, b: string, reason: string): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra === rb) return;
    const [keep, drop] = (this.order.get(ra) as number) <= (this.order.get(rb) as number) ? [ra, rb] : [rb, ra];
    this.parent.set(drop, keep);
    this.reasons.push(reason);
  }

  /** Families of more than one member, with the reasons that joined them. */
  families(): SessionFamily[] {
    const byRoot = new Map<string, string[]>();
    for (const label of this.order.keys()) {
      const root = this.find(label);
      byRoot.set(root, [...(byRoot.get(root) ?? []), label]);
    }
    return [...byRoot.entries()]
      .filter(([, members]) => members.length > 1)
      .map(([unit, members]) => ({
        unit,
        members,
        reasons: this.reasons.filter((r) => members.some((m) => r.startsWith(`${m} `))),
      }));
  }
}

/**
 * For each Claude Code transcript whose main chain starts from another listed transcript's last
 * message (`continuesFrom` = that file's `leafUuid`), the index of that other transcript. The one
 * rule behind `sessions list`'s continuation marks and the audits' units.
 */
export function continuationLinks(items: ReadonlyArray<{ tool?: string; leafUuid?: string; continuesFrom?: string }>): Map<number, number> {
  const byLeaf = new Map<string, number>();
  items.forEach((s, i) => {
    if (s.tool === 'claude' && s.leafUuid !== undefined) byLeaf.set(s.leafUuid, i);
  });
  const links = new Map<number, number>();
  items.forEach((s, i) => {
    if (s.tool !== 'claude' || s.continuesFrom === undefined) return;
    const earlier = byLeaf.get(s.continuesFrom);
    if (earlier !== undefined && earlier !== i) links.set(i, earlier);
  });
  return links;
}

/** The blocks of the first user message and the first assistant message after it, as one string (null when either is missing). */
function openingExchange(session: LabelledSession['session']): string | null {
  const user = session.messages.findIndex((m) => m.role === 'user');
  if (user < 0) return null;
  const assistant = session.messages.findIndex((m, i) => i > user && m.role === 'assistant');
  if (assistant < 0) return null;
  return JSON.stringify([session.messages[user]?.blocks, session.messages[assistant]?.blocks]);
}

/**
 * Joins the sessions recorded as forks or continuations of one another, and sessions that open
 * with the same user message and the same assistant answer (a fork whose ids were rewritten
 * still replays its parent's opening).
 */
export function linkSessionFamilies(sessions: readonly LabelledSession[], merger = new UnitMerger(sessions.map((s) => s.label))): UnitMerger {
  const byId = new Map<string, string>();
  for (const { label, session } of sessions) {
    if (session.id !== undefined && !byId.has(session.id)) byId.set(session.id, label);
  }
  for (const [later, earlier] of continuationLinks(sessions.map((s) => s.session))) {
    const a = sessions[later]!.label;
    const b = sessions[earlier]!.label;
    merger.join(a, b, `${a} continuation of ${b}`);
  }
  const byOpening = new Map<string, string>();
  for (const { label, session } of sessions) {
    const parent = session.forkedFrom === undefined ? undefined : byId.get(session.forkedFrom);
    if (parent !== undefined && parent !== label) merger.join(label, parent, `${label} fork of ${parent}`);
    // Two copies of one file (same id) are one conversation too.
    const twin = session.id === undefined ? undefined : byId.get(session.id);
    if (twin !== undefined && twin !== label) merger.join(label, twin, `${label} same session id as ${twin}`);
    const opening = openingExchange(session);
    if (opening === null) continue;
    const first = byOpening.get(opening);
    if (first === undefined) byOpening.set(opening, label);
    else merger.join(label, first, `${label} same opening exchange as ${first}`);
  }
  return merger;
}
