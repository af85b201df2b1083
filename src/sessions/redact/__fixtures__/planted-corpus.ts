import { seededRandom } from '../../../core/random.js';

/**
 * A deterministic corpus of Claude Code and Codex CLI JSONL lines with planted
 * secrets and identifiers (test helper). Every planted value is recorded with its
 * class, its line and the verifier kinds that must report it when it is left in.
 *
 * Lines are built as objects holding markers (`@@P<index>:<depth>@@`) and rendered by
 * replacing each marker with its value escaped `depth` times as a JSON string, so a
 * value can sit inside a JSON string inside a JSON string (Codex `arguments`).
 */

export interface Planted {
  cls: string;
  value: string;
  /** Verifier kinds any one of which must name this value when it is left in. */
  verifyKinds: string[];
  /** Placeholder text the redactor puts in its place (used to render "one left in" lines). */
  placeholder: string;
  /** 0-based line index. */
  line: number;
}

export interface CorpusLine {
  template: string;
  /** Planted indices that occur in this line. */
  items: number[];
}

export interface PlantedCorpus {
  lines: CorpusLine[];
  planted: Planted[];
  /** Identity terms given to the redactor (the donor's own seeds). */
  identities: string[];
  /** Extra terms only the verifier gets (names the redactor must discover by itself). */
  verifierIdentities: string[];
  quotes: string[];
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const UPPER_DIGIT = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const HEX = '0123456789abcdef';
const B64 = `${ALNUM}+/`;
const URLSAFE = `${ALNUM}-_`;

export function escapeDepth(value: string, depth: number): string {
  let out = value;
  for (let i = 0; i < depth; i++) out = JSON.stringify(out).slice(1, -1);
  return out;
}

export function renderLine(corpus: PlantedCorpus, line: CorpusLine, valueOf: (p: Planted, index: number) => string): string {
  return line.template.replace(/@@P(\d+):(\d)@@/g, (_, index: string, depth: string) => {
    const planted = corpus.planted[Number(index)]!;
    return escapeDepth(valueOf(planted, Number(index)), Number(depth));
  });
}

export function renderCorpus(corpus: PlantedCorpus): string[] {
  return corpus.lines.map((line) => renderLine(corpus, line, (p) => p.value));
}

/** The redacted shape of the corpus with exactly one planted value left in. */
export function renderWithOneLeft(corpus: PlantedCorpus, redactedLines: readonly string[], keepIndex: number): string[] {
  const target = corpus.planted[keepIndex]!;
  const out = [...redactedLines];
  const line = corpus.lines[target.line]!;
  out[target.line] = renderLine(corpus, line, (p, index) => (index === keepIndex ? p.value : p.placeholder));
  return out;
}

const FIRST = ['liam', 'noah', 'olivia', 'emma', 'mateo', 'sofia', 'yuki', 'arjun', 'chiara', 'tomasz', 'ingrid', 'kwame', 'leila', 'dmitri', 'amara', 'bjorn'];
const LAST = ['haddad', 'kowalski', 'nakamura', 'okafor', 'lindqvist', 'ferreira', 'varga', 'rahman', 'oconnell', 'petrov', 'moreau', 'castellano', 'abernathy', 'quispe'];
const TOOLS = ['Bash', 'Read', 'Edit', 'Grep'];

export function buildPlantedCorpus(seed = 20260405, episodes = 36): PlantedCorpus {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const chars = (alphabet: string, n: number) => {
    let out = '';
    for (let i = 0; i < n; i++) out += alphabet[Math.floor(random() * alphabet.length)]!;
    return out;
  };
  const mixed = (n: number) => {
    // Random but guaranteed to contain upper, lower and digits like generated keys do.
    for (;;) {
      const value = chars(ALNUM, n);
      if (/[A-Z]/.test(value) && /[a-z]/.test(value) && /[0-9].*[0-9]/.test(value)) return value;
    }
  };
  const uuid = () => `${chars(HEX, 8)}-${chars(HEX, 4)}-4${chars(HEX, 3)}-a${chars(HEX, 3)}-${chars(HEX, 12)}`;
  const timestamp = (i: number) => new Date(Date.UTC(2026, 3, 5, 9, 0, 0) + i * 7000).toISOString();

  const corpus: PlantedCorpus = {
    lines: [],
    planted: [],
    identities: ['name=Marguerite Okonkwo', 'employer=Vandelay Industries', 'project=Bluefin', 'email=m.okonkwo@vandelay.io'],
    verifierIdentities: [],
    quotes: [],
  };
  let currentItems: number[] = [];
  const plant = (cls: string, value: string, verifyKinds: string[], placeholder: string, depth = 1): string => {
    const index = corpus.planted.length;
    corpus.planted.push({ cls, value, verifyKinds, placeholder, line: -1 });
    currentItems.push(index);
    return `@@P${index}:${depth}@@`;
  };
  const emit = (object: unknown) => {
    const template = JSON.stringify(object);
    const line = corpus.lines.length;
    for (const index of currentItems) corpus.planted[index]!.line = line;
    corpus.lines.push({ template, items: currentItems });
    currentItems = [];
  };
  const emitRaw = (template: string) => {
    const line = corpus.lines.length;
    for (const index of currentItems) corpus.planted[index]!.line = line;
    corpus.lines.push({ template, items: currentItems });
    currentItems = [];
  };

  // Values planted once per class generator. `depth` 1 = inside one JSON string.
  const secret = {
    openai: (d = 1) => plant('openai_key', `sk-proj-${chars(URLSAFE, 74)}`, ['openai_key'], '<SECRET:openai_key>', d),
    openaiClassic: (d = 1) => plant('openai_key', `sk-${mixed(20)}T3BlbkFJ${mixed(20)}`, ['openai_key', 'sk_api_key'], '<SECRET:openai_key>', d),
    anthropic: (d = 1) => plant('anthropic_key', `sk-ant-api03-${chars(URLSAFE, 93)}AA`, ['anthropic_key'], '<SECRET:anthropic_key>', d),
    google: (d = 1) => plant('google_api_key', `AIza${chars(URLSAFE, 35)}`, ['google_api_key'], '<SECRET:google_api_key>', d),
    hf: (d = 1) => plant('huggingface_token', `hf_${mixed(34)}`, ['huggingface_token'], '<SECRET:huggingface_token>', d),
    groq: (d = 1) => plant('groq_key', `gsk_${mixed(52)}`, ['groq_key'], '<SECRET:groq_key>', d),
    xai: (d = 1) => plant('xai_key', `xai-${mixed(80)}`, ['xai_key'], '<SECRET:xai_key>', d),
    openrouter: (d = 1) => plant('openrouter_key', `sk-or-v1-${chars(HEX, 64)}`, ['openrouter_key'], '<SECRET:openrouter_key>', d),
    awsId: (d = 1) => plant('aws_access_key_id', `AKIA${chars(UPPER_DIGIT, 16)}`, ['aws_access_key_id'], '<SECRET:aws_access_key_id>', d),
    awsSecret: (d = 1) =>
      plant('aws_secret_access_key', `${mixed(30)}/${chars(B64, 9)}`, ['secret_assignment', 'high_entropy'], '<SECRET:aws_secret_access_key>', d),
    github: (d = 1) => plant('github_token', `ghp_${mixed(36)}`, ['github_token'], '<SECRET:github_token>', d),
    githubPat: (d = 1) => plant('github_token', `github_pat_${mixed(22)}_${mixed(59)}`, ['github_token'], '<SECRET:github_token>', d),
    gitlab: (d = 1) => plant('gitlab_token', `glpat-${mixed(20)}`, ['gitlab_token'], '<SECRET:gitlab_token>', d),
    slack: (d = 1) =>
      plant('slack_token', `xoxb-${chars('0123456789', 12)}-${chars('0123456789', 13)}-${mixed(24)}`, ['slack_token'], '<SECRET:slack_token>', d),
    slackHook: (d = 1) =>
      plant(
        'slack_webhook',
        `https://hooks.slack.com/services/T${chars(UPPER_DIGIT, 8)}/B${chars(UPPER_DIGIT, 10)}/${mixed(24)}`,
        ['slack_webhook'],
        '<SECRET:slack_webhook>',
        d,
      ),
    stripe: (d = 1) => plant('stripe_key', `sk_live_51${mixed(96)}`, ['stripe_key'], '<SECRET:stripe_key>', d),
    jwt: (d = 1) => {
      const header = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
      const payload = Buffer.from(JSON.stringify({ sub: chars(HEX, 12), iat: 1775000000 + Math.floor(random() * 1e6) })).toString('base64url');
      return plant('jwt', `${header}.${payload}.${chars(URLSAFE, 43)}`, ['jwt'], '<SECRET:jwt>', d);
    },
    pemOpenssh: (d = 1) => {
      const body = Array.from({ length: 6 }, () => chars(B64, 70)).join('\n');
      return plant(
        'ssh_key',
        `-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ${body}\n-----END OPENSSH PRIVATE KEY-----`,
        ['ssh_key'],
        '<SSH_KEY>',
        d,
      );
    },
    pemPkcs8: (d = 1) => {
      const body = Array.from({ length: 8 }, () => chars(B64, 64)).join('\n');
      return plant(
        'private_key',
        `-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC${body}\n-----END PRIVATE KEY-----\n`,
        ['private_key'],
        '<SECRET:private_key>',
        d,
      );
    },
    sshPublic: (d = 1) =>
      plant('ssh_public_key', `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI${chars(B64, 43)}`, ['ssh_key'], '<SSH_KEY>', d),
    image: (d = 1) => plant('image', chars(B64, 3000), ['base64_data'], '<BASE64_DATA>', d),
    password: (d = 1) => plant('password', `${mixed(10)}!${chars(ALNUM, 5)}`, ['password', 'secret_assignment'], '<SECRET:password>', d),
    bearer: (d = 1) => plant('bearer_token', mixed(40), ['authorization', 'bearer_token', 'high_entropy'], '<SECRET:authorization>', d),
    unnamed: (d = 1) => plant('high_entropy', mixed(32 + Math.floor(random() * 16)), ['high_entropy'], '<SECRET:high_entropy>', d),
    azure: (d = 1) => plant('azure_storage_key', `${mixed(86)}==`, ['azure_storage_key', 'high_entropy'], '<SECRET:azure_storage_key>', d),
  };

  const people = FIRST.map((first, i) => ({ first, last: LAST[i % LAST.length]! }));

  for (let episode = 0; episode < episodes; episode++) {
    const person = people[episode % people.length]!;
    const username = episode % 3 === 0 ? `${person.first}${person.last[0]}` : episode % 3 === 1 ? `${person.first[0]}${person.last}` : `${person.first}.${person.last}`;
    const workspace = `${pick(['ledger', 'atlas', 'harbor', 'quill', 'pylon', 'ember'])}-${pick(['svc', 'web', 'api', 'tools'])}${episode}`;
    const host = `${pick(['gpu', 'build', 'bastion', 'devbox'])}-${10 + episode}.${pick(['corp', 'lab'])}-net.example${episode}.com`;
    const sessionId = uuid();
    const os = episode % 4;
    corpus.verifierIdentities.push(`workspace=${workspace}`, `host=${host}`);
    const U = (placeholderText = '<USER>') => plant('user', username, ['home_path', `identity:user`], placeholderText);
    const W = () => plant('workspace', workspace, ['identity:workspace'], '<WORKSPACE>');
    const cwdTemplate = () => {
      const u = U();
      const w = W();
      return os === 0 ? `/Users/${u}/src/${w}` : os === 1 ? `/home/${u}/${w}` : os === 2 ? `C:\\Users\\${u}\\code\\${w}` : `/mnt/c/Users/${u}/work/${w}`;
    };
    corpus.verifierIdentities.push(`user=${username}`);
    let t = episode * 40;
    const envelope = (type: string, message: unknown, extra: Record<string, unknown> = {}) => ({
      parentUuid: uuid(),
      isSidechain: false,
      userType: 'external',
      cwd: cwdTemplate(),
      sessionId,
      version: '2.1.152',
      gitBranch: 'main',
      type,
      message,
      uuid: uuid(),
      timestamp: timestamp(t++),
      ...extra,
    });
    const msgId = () => `msg_01${chars(ALNUM, 22)}`;
    const toolId = () => `toolu_01${chars(ALNUM, 22)}`;
    const assistantTool = (name: string, input: Record<string, unknown>) =>
      envelope('assistant', {
        id: msgId(),
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5-20250929',
        content: [{ type: 'tool_use', id: toolId(), name, input }],
        stop_reason: null,
        usage: { input_tokens: 4, cache_read_input_tokens: 21000 + episode, output_tokens: 120 },
      }, { requestId: `req_011C${chars(ALNUM, 20)}` });
    const toolResult = (content: string, stdout?: string) =>
      envelope(
        'user',
        { role: 'user', content: [{ tool_use_id: toolId(), type: 'tool_result', content, is_error: false }] },
        stdout === undefined ? {} : { toolUseResult: { stdout, stderr: '', interrupted: false, isImage: false } },
      );

    if (episode % 2 === 0) {
      // Claude Code session.
      emit(envelope('user', { role: 'user', content: `We are on ${plant('project', 'Bluefin', ['identity:project'], '<PROJECT>')} for ${plant('employer', 'Vandelay', ['identity:employer'], '<EMPLOYER>')}. Fix the deploy script; my OpenAI key is ${secret.openai()} if you need it.` }));
      emit(assistantTool('Bash', { command: 'env | grep -i -E "key|token|secret"', description: 'Show credentials in the environment' }));
      const envDump = [
        `OPENAI_API_KEY=${secret.openaiClassic()}`,
        `ANTHROPIC_API_KEY=${secret.anthropic()}`,
        `GROQ_API_KEY=${secret.groq()}`,
        `XAI_API_KEY=${secret.xai()}`,
        `OPENROUTER_API_KEY=${secret.openrouter()}`,
        `MISTRAL_API_KEY=${plant('secret_assignment', mixed(32), ['secret_assignment', 'high_entropy'], '<SECRET:secret_assignment>')}`,
        `HF_TOKEN=${secret.hf()}`,
        `GITHUB_TOKEN=${secret.github()}`,
        `HOME=/${os === 1 ? 'home' : 'Users'}/${U()}`,
        `SLACK_BOT_TOKEN=${secret.slack()}`,
      ].join('\n');
      emit(toolResult(envDump, envDump.replace(/@@P(\d+):1@@/g, '@@P$1:1@@')));
      emit(assistantTool('Bash', { command: `git remote -v && git config user.email` }));
      emit(toolResult(`origin\thttps://${plant('user', username, ['home_path', 'identity:user'], '<USER>')}:${secret.githubPat()}@github.com/vandelay/${W()}.git (fetch)\norigin\tgit@${plant('host', host, ['identity:host'], '<HOST>')}:platform/${W()}.git (push)\n${plant('email', `${person.first}.${person.last}@vandelay.io`, ['email'], '<EMAIL>')}`));
      emit(assistantTool('Read', { file_path: `${cwdTemplate()}/.env.production` }));
      emit(
        toolResult(
          [
            `DATABASE_URL=postgres://svc_${W()}:${secret.password()}@db.internal.vandelay.io:5432/app`,
            `STRIPE_SECRET_KEY=${secret.stripe()}`,
            `AWS_ACCESS_KEY_ID=${secret.awsId()}`,
            `AWS_SECRET_ACCESS_KEY=${secret.awsSecret()}`,
            `SLACK_WEBHOOK_URL=${secret.slackHook()}`,
            `JWT_SIGNING_KEY=${plant('secret_assignment', mixed(48), ['secret_assignment', 'high_entropy'], '<SECRET:secret_assignment>')}`,
            `ADMIN_PASSWORD=${secret.password()}`,
            `GOOGLE_MAPS_KEY=${secret.google()}`,
          ].join('\n'),
        ),
      );
      emit(assistantTool('Bash', { command: `ssh -p 2222 ${plant('user', username, ['home_path', 'identity:user'], '<USER>')}@${plant('host', host, ['identity:host'], '<HOST>')} 'cat ~/.ssh/id_ed25519 ~/.ssh/id_ed25519.pub'` }));
      emit(toolResult(`${secret.pemOpenssh()}\n${secret.sshPublic()} ${U()}@laptop`));
      emit(assistantTool('Bash', { command: `curl -s -H "Authorization: Bearer ${secret.bearer()}" http://${plant('dev_server', `localhost:${3000 + episode}`, ['host'], '<HOST>:<PORT>')}/api/health` }));
      emit(toolResult(`{"ok":true,"token":"${secret.jwt(2)}","user":"${plant('email', `${username.replace('.', '_')}@gmail.com`, ['email'], '<EMAIL>', 2)}"}`));
      emit(envelope('user', { role: 'user', content: `Thanks! Also the deploy token for ${plant('host', host, ['identity:host'], '<HOST>')} is ${secret.unnamed()} and my manager is ${plant('name', 'Marguerite Okonkwo', ['identity:name'], '<USER>')} (${plant('email', 'm.okonkwo@vandelay.io', ['email', 'identity:email'], '<EMAIL>')}).` }));
      emit(assistantTool('Bash', { command: `cat "${cwdTemplate()}/config/service-account.json"` }));
      emit(
        toolResult(
          JSON.stringify(
            {
              type: 'service_account',
              project_id: `bluefin-prod-${episode}`,
              private_key_id: '@@KEYID@@',
              private_key: '@@PKCS8@@',
              client_email: '@@SAEMAIL@@',
            },
            null,
            2,
          )
            .replace('"@@KEYID@@"', `"${plant('secret_assignment', chars(HEX, 40), ['secret_assignment'], '<SECRET:secret_assignment>', 2)}"`)
            .replace('"@@PKCS8@@"', `"${secret.pemPkcs8(2)}"`)
            .replace('"@@SAEMAIL@@"', `"${plant('email', `deployer@bluefin-prod-${episode}.iam.gserviceaccount.com`, ['email'], '<EMAIL>', 2)}"`),
        ),
      );
      emit(envelope('user', { role: 'user', content: `Connection string: DefaultEndpointsProtocol=https;AccountName=vdl${episode}store;AccountKey=${secret.azure()};EndpointSuffix=core.windows.net — and my gitlab token ${secret.gitlab()}` }));
      emit(
        envelope('user', {
          role: 'user',
          content: [
            { type: 'text', text: 'This screenshot shows the failing page:' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: secret.image() } },
          ],
        }),
      );
      if (episode % 6 === 0) {
        const passage = `The Licensee shall not sublicense, sell, or otherwise redistribute the Software or any portion of it (clause ${episode}).`;
        if (!corpus.quotes.includes(passage)) corpus.quotes.push(passage);
        emit(envelope('user', { role: 'user', content: `Here is the vendor licence text:\n\n${plant('quote', passage, [], '<REDACTED_QUOTE>')}\n\nDoes it allow our use?` }));
      }
      emit(envelope('system', undefined, { subtype: 'informational', content: `Project folder ~/.claude/projects/-${os === 1 ? 'home' : 'Users'}-${plant('user', username.replace('.', '-'), ['home_path', 'identity:user'], '<USER>')}-src-${W()}/` }));
    } else {
      // Codex CLI rollout.
      emit({ timestamp: timestamp(t++), type: 'session_meta', payload: { id: sessionId, timestamp: timestamp(t), cwd: cwdTemplate(), originator: 'codex_cli_rs', cli_version: '0.135.0', git: { commit_hash: chars(HEX, 40), branch: 'main', repository_url: `git@${plant('host', host, ['identity:host'], '<HOST>')}:${plant('employer', 'vandelay', ['identity:employer'], '<EMPLOYER>')}/${W()}.git` } } });
      emit({ timestamp: timestamp(t++), type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: `Codename ${plant('project', 'bluefin', ['identity:project'], '<PROJECT>')}: rotate the keys. Current one: ${secret.anthropic()}; backup ${secret.google()}` }] } });
      const args = JSON.stringify({ command: ['bash', '-lc', `cat ${os === 2 ? 'C:\\Users\\' : '/home/'}@@U@@/.aws/credentials && printenv HF_TOKEN`], workdir: '@@CWD@@' });
      emit({
        timestamp: timestamp(t++),
        type: 'response_item',
        payload: {
          type: 'function_call',
          name: 'shell',
          arguments: args.replace('@@U@@', plant('user', username, ['home_path', 'identity:user'], '<USER>', 2)).replace('@@CWD@@', escapeDepth(cwdTemplate(), 1)),
          call_id: `call_${chars(ALNUM, 24)}`,
        },
      });
      emit({
        timestamp: timestamp(t++),
        type: 'response_item',
        payload: {
          type: 'function_call_output',
          call_id: `call_${chars(ALNUM, 24)}`,
          output: JSON.stringify({ output: `[default]\naws_access_key_id = @@A@@\naws_secret_access_key = @@S@@\n@@H@@\n`, metadata: { exit_code: 0, duration_seconds: 0.1 } })
            .replace('@@A@@', secret.awsId(2))
            .replace('@@S@@', secret.awsSecret(2))
            .replace('@@H@@', secret.hf(2)),
        },
      });
      emit({ timestamp: timestamp(t++), type: 'event_msg', payload: { type: 'user_message', message: `push with ${secret.github()} then ping ${plant('email', `${person.first}@${person.last}-family.net`, ['email'], '<EMAIL>')}; the xai key is ${secret.xai()} and groq ${secret.groq()}`, images: [] } });
      emit({ timestamp: timestamp(t++), type: 'turn_context', payload: { cwd: cwdTemplate(), approval_policy: 'on-request', sandbox_policy: { mode: 'workspace-write' }, model: 'gpt-5-codex', summary: 'auto' } });
      emit({
        timestamp: timestamp(t++),
        type: 'response_item',
        payload: {
          type: 'custom_tool_call',
          name: 'apply_patch',
          input: `*** Begin Patch\n*** Update File: config/settings.yaml\n@@\n-api_key: ${secret.openai()}\n+api_key: \${OPENAI_API_KEY}\n database:\n   password: "${secret.password()}"\n   host: ${plant('dev_server', `192.168.${episode % 250}.${10 + episode}`, ['host'], '<HOST>')}\n*** End Patch`,
          call_id: `call_${chars(ALNUM, 24)}`,
        },
      });
      emit({ timestamp: timestamp(t++), type: 'response_item', payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `Done. I added ${secret.sshPublic()} to authorized_keys on ${plant('host', host, ['identity:host'], '<HOST>')} and the stripe key ${secret.stripe()} is rotated. Ping ${plant('name', 'Okonkwo', ['identity:name'], '<USER>')} about the ${plant('employer', 'Vandelay Industries', ['identity:employer'], '<EMPLOYER>')} audit.` }] } });
      emit({ timestamp: timestamp(t++), type: 'event_msg', payload: { type: 'agent_message', message: `Open http://${plant('dev_server', `localhost:${5100 + episode}`, ['host'], '<HOST>:<PORT>')}/ — logged in as ${plant('email', `${username}@${pick(['outlook.com', 'proton.me', 'fastmail.fm'])}`, ['email'], '<EMAIL>')} with bearer ${secret.jwt()}` } });
      emitRaw(`{"timestamp":"${timestamp(t++)}","type":"response_item","payload":{"type":"function_call_output","output":"truncated ${escapeDepth('ANTHROPIC_API_KEY=', 1)}@@P${corpus.planted.length}:1@@`);
      plant('anthropic_key', `sk-ant-api03-${chars(URLSAFE, 93)}AA`, ['anthropic_key'], '<SECRET:anthropic_key>');
      const lastLine = corpus.lines.length - 1;
      corpus.planted[corpus.planted.length - 1]!.line = lastLine;
      corpus.lines[lastLine]!.items.push(...currentItems);
      currentItems = [];
    }
  }
  return corpus;
}
