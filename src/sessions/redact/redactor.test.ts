import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../core/errors.js';
import { parseIdentityTerm } from './identity.js';
import { Redactor, redactJsonLine, redactText, rewriteJsonStrings } from './redactor.js';

const r = (text: string, identities: string[] = []) => redactText(text, { identities }).text;

describe('email addresses', () => {
  it('redacts mail at country domains that are also file extensions', () => {
    for (const tld of ['pl', 'py', 'rs', 'md', 'sh']) {
      expect(r(`mail radek@example.${tld} today`)).toBe('mail <EMAIL> today');
    }
  });

  it('keeps file names with an @ in them', () => {
    expect(r('see icon@2x.png and worker@v2.mjs')).toBe('see icon@2x.png and worker@v2.mjs');
  });
});

describe('secrets by shape', () => {
  it.each([
    ['sk-proj-Ab3dEf9hIjKlMnOpQrStUvWxYz0123456789abcdEFGH_ij-KL', '<SECRET:openai_key>'],
    ['sk-ant-api03-Zx9_Yw8-Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa9876543210zyxwAA', '<SECRET:anthropic_key>'],
    ['sk-or-v1-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', '<SECRET:openrouter_key>'],
    ['AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q', '<SECRET:google_api_key>'],
    ['hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567', '<SECRET:huggingface_token>'],
    ['gsk_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKl', '<SECRET:groq_key>'],
    ['xai-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKl', '<SECRET:xai_key>'],
    ['AKIAIOSFODNN7EXAMPL2', '<SECRET:aws_access_key_id>'],
    ['ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789', '<SECRET:github_token>'],
    ['glpat-Ab12Cd34Ef56Gh78Ij90', '<SECRET:gitlab_token>'],
    ['xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx', '<SECRET:slack_token>'],
    ['sk_live_51AbCdEfGhIjKlMnOpQrStUvWx', '<SECRET:stripe_key>'],
    ['eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U', '<SECRET:jwt>'],
    ['https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX', '<SECRET:slack_webhook>'],
  ])('%s', (secret, placeholder) => {
    expect(r(`value: ${secret} end`)).toBe(`value: ${placeholder} end`);
  });

  it('never treats a known id prefix, UUID or git SHA as a secret', () => {
    const text =
      'msg_01XFDUDYJgAACzvnptvVoYEL toolu_01A09q90qw90lq917835lq9 3f1c2a9e-8b7d-4c6e-9a5f-1e2d3c4b5a69 commit 9fceb02d0ae598e95dc970b74767f19372d61af8';
    expect(r(text)).toBe(text);
  });

  it('replaces random-looking tokens and long base64 payloads', () => {
    expect(r('token 8fK2pQ9xZ3mL7vB1nR5tY0wE4cA6hJ2d here')).toBe('token <SECRET:high_entropy> here');
    const image = `data:image/png;base64,${'iVBORw0KGgoAAAANSUhEUgAA'.repeat(20)}`;
    expect(r(`src="${image}"`)).toBe('src="data:image/png;base64,<BASE64_DATA>"');
  });

  it('leaves words, identifiers and file names alone', () => {
    const text = 'getServerSidePropsForUserProfilePage --max-old-space-size=4096 api-gateway-7c9d8f6b5d-x2k8p src/sessions/redact/index.ts';
    expect(r(text)).toBe(text);
  });
});

describe('credentials in context', () => {
  it.each([
    ['postgres://app:S3cretPw9@db.example.com:5432/prod', 'postgres://<USER>:<SECRET:password>@db.example.com:5432/prod'],
    ['curl -H "Authorization: Basic dXNlcjpwYXNzd29yZDEyMw=="', 'curl -H "Authorization: Basic <SECRET:authorization>"'],
    ['export DB_PASSWORD=hunter22', 'export DB_PASSWORD=<SECRET:password>'],
    ['api_key = "a1b2c3d4e5f6g7h8"', 'api_key = "<SECRET:secret_assignment>"'],
    ['aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', 'aws_secret_access_key = <SECRET:aws_secret_access_key>'],
  ])('redacts URL passwords, headers and secret-named assignments: %s', (input, expected) => {
    expect(r(input)).toBe(expected);
  });

  it('redacts the account key of an Azure storage connection string', () => {
    expect(r('AccountName=x;AccountKey=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA==;EndpointSuffix=core.windows.net')).toContain('AccountKey=<SECRET:azure_storage_key>;');
  });

  it('keeps variables, types and code that merely name a secret', () => {
    const text = [
      'const apiKey = process.env.OPENAI_API_KEY;',
      'password: string;',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell variable, on purpose
      'export OPENAI_API_KEY="${OPENAI_API_KEY}"',
      'postgres://user:password@localhost/db',
      'return cls(api_key=api_key, password=password)',
      'const authorization = request.headers.authorization;',
    ].join('\n');
    expect(r(text)).toBe(text);
  });

  it('uses the JSON member name: {"password": "…"}', () => {
    const line = redactJsonLine('{"password":"hunter22","max_tokens":"1024","primary_key":"user_id","nested":{"client_secret":"s3cr3t-v4lue-x"}}');
    expect(JSON.parse(line.text)).toEqual({
      password: '<SECRET:password>',
      max_tokens: '1024',
      primary_key: 'user_id',
      nested: { client_secret: '<SECRET:secret_assignment>' },
    });
  });
});

describe('keys', () => {
  const body = 'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACBvX3Jk9Tz0l0xqL9ZpY2Vu5bdK3yWqLmGQ8b1hVUWzsgAAAJhZ3Lp7Wdy6';
  it('removes whole PEM blocks, raw or JSON-escaped, and ssh public keys', () => {
    const pem = `-----BEGIN OPENSSH PRIVATE KEY-----\n${body}\n-----END OPENSSH PRIVATE KEY-----`;
    expect(r(`key:\n${pem}\ndone`)).toBe('key:\n<SSH_KEY>\ndone');
    expect(r(`"${JSON.stringify(pem).slice(1, -1)}"`)).toBe('"<SSH_KEY>"');
    const pkcs8 = `-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\n-----END PRIVATE KEY-----\\n`;
    expect(r(`"private_key": "${pkcs8}"`)).toBe('"private_key": "<SECRET:private_key>\\n"');
    expect(r('ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq0lF6yXb2m3nP4qR5sT6uV7wX8yZ9a0b1c2d3e4f5g host')).toBe('<SSH_KEY> host');
  });

  it('removes a PEM block cut off before its END line', () => {
    expect(r(`-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7x9\nQk3Zy`)).toBe('<SSH_KEY>');
  });
});

describe('home paths, usernames and workspaces', () => {
  it.each([
    ['/Users/alice/src/billing-svc/a.ts', '/Users/<USER>/src/<WORKSPACE>/a.ts'],
    ['/home/alice/billing-svc/a.py', '/home/<USER>/<WORKSPACE>/a.py'],
    ['C:\\Users\\alice\\code\\billing-svc\\x.ts', 'C:\\Users\\<USER>\\code\\<WORKSPACE>\\x.ts'],
    ['C:\\\\Users\\\\alice\\\\code', 'C:\\\\Users\\\\<USER>\\\\code'],
    ['/mnt/c/Users/alice/work/billing-svc', '/mnt/c/Users/<USER>/work/<WORKSPACE>'],
    ['see ~alice/notes.txt', 'see ~<USER>/notes.txt'],
    [
      'cwd /Users/alice/src/billing-svc in ~/.claude/projects/-Users-alice-src-billing-svc/x.jsonl',
      'cwd /Users/<USER>/src/<WORKSPACE> in ~/.claude/projects/-Users-<USER>-src-<WORKSPACE>/x.jsonl',
    ],
    ['-home-alice-proj/x.jsonl', '-home-<USER>-proj/x.jsonl'],
    ['/home/ubuntu/app.log', '/home/<USER>/app.log'],
  ])('%s', (input, expected) => {
    expect(r(input)).toBe(expected);
  });

  it('redacts a discovered username everywhere, on word boundaries only', () => {
    const text = 'cwd /home/alice/x.ts; alice ran it, alice_backup exists; malice and Alicea are words';
    expect(r(text)).toBe('cwd /home/<USER>/x.ts; <USER> ran it, <USER>_backup exists; malice and Alicea are words');
  });

  it('does not hunt system account names outside paths', () => {
    expect(r('/home/ubuntu/x and Ubuntu 24.04')).toBe('/home/<USER>/x and Ubuntu 24.04');
  });

  it('does not take URL paths for home folders', () => {
    expect(r('https://example.com/home/about')).toBe('https://example.com/home/about');
  });
});

describe('identity terms', () => {
  it('parses classes and rejects unusable terms', () => {
    expect(parseIdentityTerm('employer=Acme')).toEqual({ term: 'Acme', class: 'employer' });
    expect(parseIdentityTerm('alice')).toEqual({ term: 'alice', class: 'user' });
    expect(parseIdentityTerm('user=a=b=c')).toEqual({ term: 'a=b=c', class: 'user' });
    expect(() => parseIdentityTerm('a=b=c')).toThrow(/unknown identity class/);
    expect(() => parseIdentityTerm('employer=A')).toThrow(InvalidArgumentError);
  });

  it('matches case-insensitively on word boundaries with name variants', () => {
    const ids = ['name=Zoë Müller', 'employer=Acme Labs', 'project=Bluefin', 'host=devbox07'];
    expect(r('Zoë Müller, zoe.muller@example.org and zoe_muller, zmuller; ZOË', ids)).toBe('<USER>, <EMAIL> and <USER>, <USER>; <USER>');
    expect(r('ACME labs and acme-labs, Acmeville, labs', ids)).toBe('<EMPLOYER> and <EMPLOYER>, Acmeville, labs');
    expect(r('bluefin-v2 on devbox07:8080', ids)).toBe('<PROJECT>-v2 on <HOST>:8080');
  });

  it('never corrupts a placeholder even when a term is a placeholder word', () => {
    expect(r('/home/bob/x user bob', ['user=user'])).toBe('/home/<USER>/x <USER> <USER>');
  });
});

describe('hosts and ports', () => {
  it.each([
    ['ssh -p 2222 -i ~/.ssh/id_ed25519 deploy@build01.acme.io uptime', 'ssh -p <PORT> -i ~/.ssh/id_ed25519 <USER>@<HOST> uptime'],
    ['open http://localhost:5173/app and 127.0.0.1:8080', 'open http://<HOST>:<PORT>/app and <HOST>:<PORT>'],
    ['scp a.txt deploy@10.0.3.7:/srv/', 'scp a.txt <USER>@<HOST>:/srv/'],
    ['git@github.com:nodejs/node.git', 'git@github.com:nodejs/node.git'],
    ['Host devbox\n  HostName 192.168.1.20\n  User alice', 'Host <HOST>\n  HostName <HOST>\n  User <USER>'],
  ])('redacts ssh destinations, ports, dev servers and private addresses: %j', (input, expected) => {
    expect(r(input)).toBe(expected);
  });

  it('redacts a host learned from ssh wherever it appears', () => {
    expect(r('ssh gpu-box-17 nvidia-smi; later gpu-box-17 rebooted')).toBe('ssh <HOST> nvidia-smi; later <HOST> rebooted');
  });
});

describe('quotes', () => {
  it('replaces marked passages, whatever their line breaks', () => {
    const passage = 'The Licensee shall not sublicense or redistribute the Software.';
    const text = 'Licence: The Licensee shall not\nsublicense or redistribute the Software. OK?';
    expect(redactText(text, { quotes: [passage] }).text).toBe('Licence: <REDACTED_QUOTE> OK?');
  });
});

describe('JSON lines', () => {
  it('rewrites strings only: numbers, spacing and key order are byte-identical', () => {
    const line = '{"b": 1.50, "a":[1e5, true, null, "/home/alice/x"], "c" : {"d":"plain"}}';
    expect(redactJsonLine(line).text).toBe('{"b": 1.50, "a":[1e5, true, null, "/home/<USER>/x"], "c" : {"d":"plain"}}');
  });

  it('redacts keys and keeps colliding keys apart', () => {
    const line = '{"/home/alice/a.ts": 1, "/home/bob/a.ts": 2, "/home/<USER>/a.ts~2": 3}';
    const parsed = JSON.parse(redactJsonLine(line).text) as Record<string, number>;
    expect(Object.values(parsed).sort()).toEqual([1, 2, 3]);
    expect(Object.keys(parsed)).toHaveLength(3);
    expect(Object.keys(parsed)).toContain('/home/<USER>/a.ts');
  });

  it('keeps original escapes of strings it does not change', () => {
    const line = '{"a":"caf\\u00e9 \\/ ok","b":"\\ud83d\\ude00"}';
    expect(redactJsonLine(line).text).toBe(line);
  });

  it('redacts a malformed line as raw text and reports it as such', () => {
    const result = redactJsonLine('{"type":"user","content":"token ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789');
    expect(result.json).toBe(false);
    expect(result.text).toBe('{"type":"user","content":"token <SECRET:github_token>');
  });

  it('rewriteJsonStrings passes member names for values only', () => {
    const seen: Array<[string, string | undefined]> = [];
    rewriteJsonStrings('{"k":"v","arr":["x"],"o":{"p":"q"}}', (value, member) => {
      seen.push([value, member]);
      return value;
    });
    expect(seen).toEqual([
      ['k', undefined],
      ['v', 'k'],
      ['arr', undefined],
      ['x', undefined],
      ['o', undefined],
      ['p', undefined],
      ['q', 'p'],
    ]);
  });

  it('is deterministic and idempotent', () => {
    const text = 'alice at /Users/alice/proj-x with sk-proj-Ab3dEf9hIjKlMnOpQrStUvWxYz0123456789 and alice@example.org';
    const once = r(text);
    expect(r(text)).toBe(once);
    expect(r(once)).toBe(once);
  });

  it('counts per class without holding the values', () => {
    const redactor = new Redactor({ identities: ['employer=Acme'] });
    const { counts } = redactor.redactText('Acme key sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAA and bob@acme.com');
    expect(counts).toEqual({ employer: 1, 'secret:anthropic_key': 1, email: 1 });
    expect(JSON.stringify(counts)).not.toMatch(/acme|sk-ant|bob/i);
  });
});

describe('robustness', () => {
  it('any JSON value comes back as valid JSON with the same structure', async () => {
    const fc = await import('fast-check');
    const shape = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(shape);
      if (value !== null && typeof value === 'object') return Object.values(value).map(shape);
      return typeof value;
    };
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const line = JSON.stringify(value);
        const out = redactJsonLine(line, { identities: ['employer=Acme'] });
        expect(out.json).toBe(true);
        const parsed = JSON.parse(out.text);
        expect(shape(parsed)).toEqual(shape(value));
      }),
      { numRuns: 300, seed: 42 },
    );
  });

  it('any text, malformed JSON included, is redacted without throwing', async () => {
    const fc = await import('fast-check');
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme-composite', maxLength: 300 }), (text) => {
        const out = redactJsonLine(`{"a":"${text}`);
        expect(typeof out.text).toBe('string');
      }),
      { numRuns: 300, seed: 7 },
    );
  });

  it('finishes on pathological repetitions', () => {
    for (const unit of ['a@a.a@a.', '-----BEGIN PRIVATE KEY-----', 'sk-', '/home/', '-Users-', 'password=', 'api_key: "', 'http://a:b@', 'ssh -p ']) {
      const text = unit.repeat(Math.ceil(20_000 / unit.length));
      expect(typeof redactText(text).text).toBe('string');
    }
  });
});

describe('opaque provider blobs', () => {
  it('replaces thinking signatures and encrypted reasoning of any length', () => {
    const line = '{"type":"thinking","thinking":"plan","signature":"EqQBCkYIBxgCKkD0c2lnbmF0dXJl"}';
    expect(redactJsonLine(line).text).toBe('{"type":"thinking","thinking":"plan","signature":"<BASE64_DATA>"}');
    expect(redactJsonLine('{"signature":"short"}').text).toBe('{"signature":"short"}');
  });
});
