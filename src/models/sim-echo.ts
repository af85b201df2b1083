import { registerSimProfile } from './sim-registry.js';

/** `sim:echo` — a simulation that answers with the last user message, unchanged. For plumbing tests and demos. */
export const ECHO_PROFILE_NAME = 'echo';

registerSimProfile({
  name: ECHO_PROFILE_NAME,
  description: 'simulation: echoes the last user message verbatim (measures nothing)',
  answer(request) {
    for (let i = request.messages.length - 1; i >= 0; i--) {
      const message = request.messages[i];
      if (message?.role === 'user') return { text: message.content };
    }
    return { text: '' };
  },
});
