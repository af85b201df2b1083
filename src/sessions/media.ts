import { isObject, str } from '../core/guards.js';
import type { Block } from './types.js';

/**
 * Images and documents in transcripts (pure). A model saw them, but their bytes are not text:
 * every rendering shows a typed placeholder instead, e.g. `[image: image/png, 48 KB]`.
 */

export interface Media {
  kind: 'image' | 'document';
  mediaType?: string;
  /** Decoded size in bytes, when the data is inline. */
  bytes?: number;
}

/** `[image: image/png, 48 KB]`; `[image]` when neither type nor size is known. */
export function mediaPlaceholder(media: { kind: string; mediaType?: string | undefined; bytes?: number | undefined }): string {
  const facts: string[] = [];
  if (media.mediaType !== undefined) facts.push(media.mediaType);
  if (media.bytes !== undefined) facts.push(formatBytes(media.bytes));
  return facts.length === 0 ? `[${media.kind}]` : `[${media.kind}: ${facts.join(', ')}]`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** Bytes that a base64 text decodes to (whitespace ignored). */
export function base64Bytes(data: string): number {
  const clean = data.replace(/\s+/g, '');
  const padding = clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}

/** The placeholder block of an image or document (the facts known about it, never its bytes). */
export function mediaBlock({ kind, ...facts }: Media): Block {
  return { type: 'other', kind, ...facts };
}

/** An Anthropic `image` / `document` block (`source: {type: 'base64', media_type, data}` or a URL). */
export function anthropicMedia(kind: 'image' | 'document', block: Record<string, unknown>): Media {
  const media: Media = { kind };
  const source = isObject(block.source) ? block.source : undefined;
  const type = source === undefined ? undefined : str(source.media_type);
  if (type !== undefined) media.mediaType = type;
  const data = source === undefined ? undefined : str(source.data);
  if (data !== undefined) media.bytes = base64Bytes(data);
  return media;
}

/** A Codex `input_image` item: `image_url` is a `data:<type>;base64,…` URL or a link. */
export function codexImage(item: Record<string, unknown>): Media {
  const media: Media = { kind: 'image' };
  const url = str(item.image_url) ?? (isObject(item.image_url) ? str(item.image_url.url) : undefined);
  const match = url === undefined ? null : /^data:([^;,]+)?(;base64)?,/.exec(url);
  if (match) {
    if (match[1] !== undefined) media.mediaType = match[1];
    const payload = url!.slice(match[0].length);
    media.bytes = match[2] === undefined ? decodeURIComponent(payload).length : base64Bytes(payload);
  }
  return media;
}
