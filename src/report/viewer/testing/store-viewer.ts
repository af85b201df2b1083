import { afterAll, expect } from 'vitest';
import { createAdapter } from '../../../models/create-adapter.js';
import { openStore, type RunStore } from '../../../store/run-store.js';
import { startViewer, type ViewerServer } from '../server.js';

/** A viewer on a free port over one store and no sessions; the target and judge (simulated by default) only serve the live probe. */
export function startStoreViewer(db: string, store: RunStore, models: { target?: string; judge?: string } = {}): Promise<ViewerServer> {
  return startViewer({
    stores: [{ file: db, store }],
    sessions: [],
    target: createAdapter(models.target ?? 'sim:persona'),
    judge: createAdapter(models.judge ?? 'sim:judge'),
    port: 0,
  });
}

/** The body of a viewer page that must answer 200. */
export async function viewerText(viewer: ViewerServer, path: string): Promise<string> {
  const response = await fetch(new URL(path, viewer.url));
  expect(response.status, path).toBe(200);
  return response.text();
}

/**
 * A read-only store and a viewer over it for the calling file (or describe block): `open` them in a
 * `beforeAll`; both close after its tests.
 */
export function useStoreViewer(models: { target?: string; judge?: string } = {}): { open(db: string): Promise<void>; readonly viewer: ViewerServer } {
  let opened: { store: RunStore; viewer: ViewerServer } | undefined;
  afterAll(async () => {
    await opened?.viewer.close();
    await opened?.store.close();
  });
  return {
    async open(db) {
      const store = openStore(db, { readonly: true });
      opened = { store, viewer: await startStoreViewer(db, store, models) };
    },
    get viewer() {
      if (opened === undefined) throw new Error('useStoreViewer: open() was not called');
      return opened.viewer;
    },
  };
}
