/**
 * Planted credentials in the forms people paste into a coding agent, table-driven: each
 * row is one text (a shell line, a code fragment, a config line, a URL) and the pieces of
 * it that must not survive `sessions redact` and that `sessions verify` must flag. Every
 * value here was made up for this file; none is or was a live credential.
 *
 * `secrets` lists what must disappear. A key split into string pieces lists each piece
 * long enough to matter (a piece like `sk-` alone says nothing).
 */
export interface SecretCase {
  kind: string;
  form: string;
  text: string;
  secrets: string[];
}

const b64 = (text: string) => Buffer.from(text).toString('base64');
const HEX40 = '9f2c4e7a1b3d5f60718293a4b5c6d7e8f9012345';
const HEX64 = 'c1d2e3f405162738495a6b7c8d9eaf0b1c2d3e4f5061728394a5b6c7d8e9f0a1';
const HEX64B = '7e3b9a1c5d2f4e6a8b0c1d3e5f7a9b2c4d6e8f0a1b3c5d7e9f2a4b6c8d0e1f3a';
const OPENAI = 'sk-proj-Vt4Rk9Qm2Lx7Wn3Bp8Zc5Hs1Jd6Fg0Ay4Ke7Tu2Mq9Np3Xv8Cw5Rb1Ls6Dh0Gj';
const ANTHROPIC = 'sk-ant-api03-Qp7Zx2Mv9Kt4Lr8Wn3Hc6Bd1Fs5Jg0Ye4Ua7Ti2Ro9Ek3Nw8Xm5Sv1Cq6Pl0AA';
const GITHUB = 'ghp_R7kM2xQ9vL4tW8nB3pZ6cH1sJ5dF0gYa2Ke4';
const GITLAB = 'glpat-Xc8Vn2Bm5Qw9Er3Ty7Ui1';

/** Rows grouped by kind; each kind is written in many forms. */
export const SECRET_CASES: SecretCase[] = [
  // ── curl / wget / httpie basic auth ─────────────────────────────────────────────
  {
    kind: 'cli_basic_auth',
    form: 'curl -u user:pass',
    text: 'curl -u deploy:Winter2027Deploy! https://api.example.com/v1/releases',
    secrets: ['Winter2027Deploy!'],
  },
  { kind: 'cli_basic_auth', form: 'curl --user', text: 'curl -sS --user ci-bot:Qm7vR2pLx9Tz https://ci.example.org/api/json', secrets: ['Qm7vR2pLx9Tz'] },
  {
    kind: 'cli_basic_auth',
    form: 'curl -u "quoted"',
    text: 'curl -X POST -u "admin:S3cr3t-Pa55" -d @body.json https://hooks.example.net/x',
    secrets: ['S3cr3t-Pa55'],
  },
  {
    kind: 'cli_basic_auth',
    form: "curl -u 'quoted' late",
    text: "curl -fsSL https://dl.example.com/pkg.tgz -u 'svc-pull:h4ppyHippo77' -o pkg.tgz",
    secrets: ['h4ppyHippo77'],
  },
  {
    kind: 'cli_basic_auth',
    form: 'curl -uUSER:PASS glued',
    text: 'curl -uops:Lantern88keeper https://jenkins.example.io/job/build',
    secrets: ['Lantern88keeper'],
  },
  {
    kind: 'cli_basic_auth',
    form: 'wget --password=',
    text: 'wget --user=ops --password=Tr1ckyPass2026 https://files.example.com/dump.sql.gz',
    secrets: ['Tr1ckyPass2026'],
  },
  { kind: 'cli_basic_auth', form: 'httpie -a', text: 'http -a reporter:Marigold!4471 GET https://api.example.com/metrics', secrets: ['Marigold!4471'] },
  {
    kind: 'cli_basic_auth',
    form: 'python -c with curl string',
    text: 'subprocess.run(["curl", "-u", "deploy:Cobalt-Ridge-93", url])',
    secrets: ['Cobalt-Ridge-93'],
  },

  // ── mysql family ────────────────────────────────────────────────────────────────
  { kind: 'mysql_password', form: 'mysql -pPASS', text: 'mysql -u root -pS3cretMy4980 appdb < schema.sql', secrets: ['S3cretMy4980'] },
  {
    kind: 'mysql_password',
    form: 'mysql --password=',
    text: 'mysql --host=db.internal --user=app --password=Hunter2Hunter2 -e "show tables"',
    secrets: ['Hunter2Hunter2'],
  },
  { kind: 'mysql_password', form: "mysqldump -p'quoted'", text: "mysqldump -uadmin -p'Quartz!889x' shop > shop.sql", secrets: ['Quartz!889x'] },
  { kind: 'mysql_password', form: 'mysqladmin -p"quoted"', text: 'mysqladmin -u root -p"Zeb7ra#1qq" status', secrets: ['Zeb7ra#1qq'] },
  { kind: 'mysql_password', form: 'mysql --password SPACE', text: 'mysql --user reader --password Rook9Castle4 analytics', secrets: ['Rook9Castle4'] },
  { kind: 'mysql_password', form: 'MYSQL_PWD env', text: 'MYSQL_PWD=Tundra55Fox mysql -u app -h 10.1.2.3 app', secrets: ['Tundra55Fox'] },
  { kind: 'mysql_password', form: 'mariadb -p', text: 'docker exec -it db mariadb -uroot -pMaple7Syrup21', secrets: ['Maple7Syrup21'] },
  {
    kind: 'mysql_password',
    form: 'my.cnf password =',
    text: '[client]\nuser = backup\npassword = Ostrich!Egg73\nhost = 127.0.0.1',
    secrets: ['Ostrich!Egg73'],
  },

  // ── .pgpass and libpq ───────────────────────────────────────────────────────────
  { kind: 'pgpass', form: 'host:port:db:user:password', text: 'db.internal.example.com:5432:appdb:appuser:PgSecret2026x', secrets: ['PgSecret2026x'] },
  { kind: 'pgpass', form: 'wildcards', text: '*:*:*:postgres:Ellipse44Moon', secrets: ['Ellipse44Moon'] },
  { kind: 'pgpass', form: 'localhost with punctuation', text: 'localhost:5432:*:replicator:r3pl-Pass-77!', secrets: ['r3pl-Pass-77!'] },
  {
    kind: 'pgpass',
    form: 'cat ~/.pgpass output',
    text: '$ cat ~/.pgpass\npg-primary:5432:billing:billing_rw:Giraffe!Neck29\npg-replica:5433:billing:billing_ro:Walrus-Tusk-81',
    secrets: ['Giraffe!Neck29', 'Walrus-Tusk-81'],
  },
  {
    kind: 'pgpass',
    form: 'echo >> ~/.pgpass',
    text: 'echo "10.0.4.12:5432:metrics:grafana:Saffron7Crocus" >> ~/.pgpass && chmod 600 ~/.pgpass',
    secrets: ['Saffron7Crocus'],
  },
  {
    kind: 'pgpass',
    form: 'libpq key=value',
    text: 'psql "host=db.example.com port=5432 dbname=app user=app password=Sw0rdfish!9 sslmode=require"',
    secrets: ['Sw0rdfish!9'],
  },
  { kind: 'pgpass', form: 'PGPASSWORD env', text: 'PGPASSWORD=Pelican-Dive-42 psql -h db -U app -c "select 1"', secrets: ['Pelican-Dive-42'] },

  // ── Python / JS basic-auth tuples and objects ─────────────────────────────────────
  { kind: 'auth_tuple', form: 'requests auth=("u", "p")', text: 'r = requests.get(URL, auth=("admin", "Sup3rS3cret13"))', secrets: ['Sup3rS3cret13'] },
  { kind: 'auth_tuple', form: "auth=('u', 'p')", text: "resp = session.post(endpoint, json=payload, auth=('svc', 'p4ss-W0rd-x9'))", secrets: ['p4ss-W0rd-x9'] },
  { kind: 'auth_tuple', form: 'HTTPBasicAuth', text: 'auth = HTTPBasicAuth("ops", "BlueWhale!42z")', secrets: ['BlueWhale!42z'] },
  { kind: 'auth_tuple', form: 'httpx Client(auth=)', text: 'client = httpx.Client(base_url=BASE, auth=("bot", "Lantern#8842q"))', secrets: ['Lantern#8842q'] },
  {
    kind: 'auth_tuple',
    form: 'aiohttp BasicAuth',
    text: "async with aiohttp.ClientSession(auth=aiohttp.BasicAuth('reader', 'Corvid-55-Nest')) as s:",
    secrets: ['Corvid-55-Nest'],
  },
  { kind: 'auth_tuple', form: 'session.auth =', text: 's = requests.Session()\ns.auth = ("admin", "Tangerine77!x")', secrets: ['Tangerine77!x'] },
  {
    kind: 'auth_tuple',
    form: 'auth=(var, "p") multi-line',
    text: 'requests.put(\n    url,\n    auth=(\n        user,\n        "Ravioli-Storm-2026",\n    ),\n)',
    secrets: ['Ravioli-Storm-2026'],
  },
  {
    kind: 'auth_tuple',
    form: 'axios auth object',
    text: "await axios.get(url, { auth: { username: 'admin', password: 'Pelican#2291z' } });",
    secrets: ['Pelican#2291z'],
  },
  {
    kind: 'auth_tuple',
    form: 'urllib3 make_headers basic_auth',
    text: 'headers = urllib3.make_headers(basic_auth="deploy:Comet-Tail-808")',
    secrets: ['Comet-Tail-808'],
  },
  {
    kind: 'auth_tuple',
    form: 'JSON-escaped in a tool call',
    text: '{"command": "python -c \\"import requests; requests.get(u, auth=(\'root\', \'Nimbus!Cloud64\'))\\""}',
    secrets: ['Nimbus!Cloud64'],
  },

  // ── HTTP Basic headers ──────────────────────────────────────────────────────────
  {
    kind: 'basic_header',
    form: 'curl -H Authorization: Basic',
    text: `curl -H "Authorization: Basic ${b64('deploy:Winter2027Deploy!')}" https://api.example.com`,
    secrets: [b64('deploy:Winter2027Deploy!')],
  },
  {
    kind: 'basic_header',
    form: 'raw HTTP request',
    text: `GET /private HTTP/1.1\nHost: example.com\nAuthorization: Basic ${b64('ops:Kestrel-Wing-17')}\nAccept: */*`,
    secrets: [b64('ops:Kestrel-Wing-17')],
  },
  {
    kind: 'basic_header',
    form: 'JSON headers object',
    text: `{"headers": {"Authorization": "Basic ${b64('svc:Harbor!Seal90')}", "Accept": "application/json"}}`,
    secrets: [b64('svc:Harbor!Seal90')],
  },
  {
    kind: 'basic_header',
    form: 'python headers dict',
    text: `headers = {'authorization': 'Basic ${b64('bot:Quill-Ink-4455')}'}`,
    secrets: [b64('bot:Quill-Ink-4455')],
  },
  {
    kind: 'basic_header',
    form: 'Proxy-Authorization',
    text: `Proxy-Authorization: Basic ${b64('proxyuser:Fennel7Seed')}`,
    secrets: [b64('proxyuser:Fennel7Seed')],
  },
  {
    kind: 'basic_header',
    form: 'nginx proxy_set_header',
    text: `proxy_set_header Authorization "Basic ${b64('upstream:Obsidian-Edge-3')}";`,
    secrets: [b64('upstream:Obsidian-Edge-3')],
  },
  { kind: 'basic_header', form: 'short password', text: `Authorization: Basic ${b64('a:b7Xq9')}`, secrets: [b64('a:b7Xq9')] },

  // ── keys split into pieces joined at run time ─────────────────────────────────────
  {
    kind: 'split_key',
    form: 'JS + concatenation',
    text: `const key = "sk-" + "proj-Vt4Rk9Qm2Lx7Wn3Bp8Zc5" + "Hs1Jd6Fg0Ay4Ke7Tu2Mq9Np3";`,
    secrets: ['proj-Vt4Rk9Qm2Lx7Wn3Bp8Zc5', 'Hs1Jd6Fg0Ay4Ke7Tu2Mq9Np3'],
  },
  {
    kind: 'split_key',
    form: "['…'].join('')",
    text: "const apiKey = ['sk-ant-', 'api03-Qp7Zx2Mv9Kt4Lr8', 'Wn3Hc6Bd1Fs5Jg0Ye4Ua'].join('');",
    secrets: ['api03-Qp7Zx2Mv9Kt4Lr8', 'Wn3Hc6Bd1Fs5Jg0Ye4Ua'],
  },
  {
    kind: 'split_key',
    form: "Python ''.join([…])",
    text: "KEY = ''.join(['ghp_R7kM2x', 'Q9vL4tW8nB3p', 'Z6cH1sJ5dF0gYa2Ke4'])",
    secrets: ['Q9vL4tW8nB3p', 'Z6cH1sJ5dF0gYa2Ke4'],
  },
  {
    kind: 'split_key',
    form: 'Python implicit concatenation',
    text: 'OPENAI_KEY = (\n    "sk-proj-Vt4Rk9Qm2Lx7"\n    "Wn3Bp8Zc5Hs1Jd6Fg0"\n    "Ay4Ke7Tu2Mq9Np3Xv8"\n)',
    secrets: ['Vt4Rk9Qm2Lx7', 'Wn3Bp8Zc5Hs1Jd6Fg0', 'Ay4Ke7Tu2Mq9Np3Xv8'],
  },
  {
    kind: 'split_key',
    form: '+ across lines',
    text: "const token =\n  'glpat-' +\n  'Xc8Vn2Bm5Q' +\n  'w9Er3Ty7Ui1';",
    secrets: ['Xc8Vn2Bm5Q', 'w9Er3Ty7Ui1'],
  },
  {
    kind: 'split_key',
    form: 'template literal pieces',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: source text that holds a template, on purpose
    text: 'const k = `${"sk-ant-api03-"}${"Lr8Wn3Hc6Bd1Fs5J"}${"g0Ye4Ua7Ti2Ro9Ek"}`;',
    secrets: ['Lr8Wn3Hc6Bd1Fs5J', 'g0Ye4Ua7Ti2Ro9Ek'],
  },
  {
    kind: 'split_key',
    form: 'String.concat',
    text: "const key = 'sk-proj-'.concat('Zc5Hs1Jd6Fg0Ay4K', 'e7Tu2Mq9Np3Xv8Cw');",
    secrets: ['Zc5Hs1Jd6Fg0Ay4K', 'e7Tu2Mq9Np3Xv8Cw'],
  },
  {
    kind: 'split_key',
    form: 'shell variable pieces',
    text: 'A="ghp_R7kM2xQ9vL4"; B="tW8nB3pZ6cH1sJ5dF0gYa2Ke4"; export GITHUB_TOKEN="$A$B"',
    secrets: ['tW8nB3pZ6cH1sJ5dF0gYa2Ke4'],
  },
  {
    kind: 'split_key',
    form: 'random pieces, no prefix',
    text: 'const secret = "Qx7Lm2Vr9" + "Tz4Wp8Kn3" + "Bc6Hd1Fs5";',
    secrets: ['Qx7Lm2Vr9', 'Tz4Wp8Kn3', 'Bc6Hd1Fs5'],
  },

  // ── signed URLs and tokens in query strings ────────────────────────────────────────
  { kind: 'url_query_token', form: '?token=<40 hex>', text: `https://downloads.example.com/artifact.zip?token=${HEX40}`, secrets: [HEX40] },
  {
    kind: 'url_query_token',
    form: '&access_token=',
    text: 'GET https://graph.example.com/v2/me?fields=id,name&access_token=EAAGm0PX4ZCpsBAKx9Lq2Vt7Wz3Rn8Hc5Yd1',
    secrets: ['EAAGm0PX4ZCpsBAKx9Lq2Vt7Wz3Rn8Hc5Yd1'],
  },
  {
    kind: 'url_query_token',
    form: 'S3 presigned X-Amz-Signature',
    text: `https://bucket.s3.amazonaws.com/report.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20261201T101010Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature=${HEX64}`,
    secrets: [HEX64],
  },
  {
    kind: 'url_query_token',
    form: 'X-Amz-Security-Token',
    text: 'https://b.s3.amazonaws.com/k?X-Amz-Security-Token=IQoJb3JpZ2luX2VjEJr4Lm9Qx2Vt7Wz3Rn8Hc5Yd1Kp6Ts0Gb4Fa&X-Amz-Signature=abc',
    secrets: ['IQoJb3JpZ2luX2VjEJr4Lm9Qx2Vt7Wz3Rn8Hc5Yd1Kp6Ts0Gb4Fa'],
  },
  {
    kind: 'url_query_token',
    form: 'GCS X-Goog-Signature',
    text: `https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Signature=${HEX64}${HEX64B}`,
    secrets: [`${HEX64}${HEX64B}`],
  },
  {
    kind: 'url_query_token',
    form: '?api_key=',
    text: 'fetch(`https://api.weather.example.com/v1/now?city=Oslo&api_key=7d3f9a1c5e2b4d6f8a0c1e3b5d7f9a2c`)',
    secrets: ['7d3f9a1c5e2b4d6f8a0c1e3b5d7f9a2c'],
  },
  {
    kind: 'url_query_token',
    form: '?apikey= mixed',
    text: 'curl "https://api.example.com/search?q=x&apikey=Vq8Lm3Xt7Rz2Wn9Kp4"',
    secrets: ['Vq8Lm3Xt7Rz2Wn9Kp4'],
  },
  { kind: 'url_query_token', form: '&signature=', text: `https://cdn.example.com/v/clip.mp4?expires=1790000000&signature=${HEX64B}`, secrets: [HEX64B] },
  {
    kind: 'url_query_token',
    form: '&password= in URL',
    text: 'jdbc:postgresql://db.example.com:5432/app?user=app&password=Jdbc!Secret55&ssl=true',
    secrets: ['Jdbc!Secret55'],
  },
  {
    kind: 'url_query_token',
    form: 'private_token=',
    text: 'https://gitlab.example.com/api/v4/projects?private_token=Xc8Vn2Bm5Qw9Er3Ty7Ui1',
    secrets: ['Xc8Vn2Bm5Qw9Er3Ty7Ui1'],
  },
  {
    kind: 'url_query_token',
    form: '?auth= (Firebase)',
    text: 'https://proj.firebaseio.com/users.json?auth=Qm3Lx8Vt2Wz7Rn4Hc9Yd5Kp1Ts6',
    secrets: ['Qm3Lx8Vt2Wz7Rn4Hc9Yd5Kp1Ts6'],
  },
  {
    kind: 'url_query_token',
    form: 'client_secret= in body',
    text: 'grant_type=client_credentials&client_id=app123&client_secret=Zr8Km3Qx7Lt2Wv9Bn4',
    secrets: ['Zr8Km3Qx7Lt2Wv9Bn4'],
  },
  { kind: 'url_query_token', form: 'token= hex in JSON string', text: `{"url": "https://example.com/dl?id=7&token=${HEX40}"}`, secrets: [HEX40] },
  {
    kind: 'url_query_token',
    form: 'Azure SAS sig=',
    text: 'https://acct.blob.core.windows.net/c/b.txt?sv=2024-01-01&se=2026-12-31&sp=r&sig=Xk9%2BLm3Qv7Rt2Wz8Hn4Yc1Bd6Fs5Jg0Ke%3D',
    secrets: ['Xk9%2BLm3Qv7Rt2Wz8Hn4Yc1Bd6Fs5Jg0Ke%3D'],
  },

  // ── connection strings ───────────────────────────────────────────────────────────
  { kind: 'connection_string', form: 'postgres://', text: 'DATABASE_URL=postgres://app:Plum!Tree88@db.example.com:5432/app', secrets: ['Plum!Tree88'] },
  {
    kind: 'connection_string',
    form: 'postgresql:// in code',
    text: 'engine = create_engine("postgresql+psycopg://etl:Birch-Bark-61@warehouse:5432/dw")',
    secrets: ['Birch-Bark-61'],
  },
  { kind: 'connection_string', form: 'mysql://', text: 'mysql://root:Mango77Lassi@127.0.0.1:3306/shop', secrets: ['Mango77Lassi'] },
  {
    kind: 'connection_string',
    form: 'mongodb+srv://',
    text: 'MONGO_URI="mongodb+srv://atlas-admin:Reef9Coral2@cluster0.ab1cd.mongodb.net/prod?retryWrites=true"',
    secrets: ['Reef9Coral2'],
  },
  {
    kind: 'connection_string',
    form: 'mongodb:// replica set',
    text: 'mongodb://app:Sierra-Nevada-5@m1.example.com:27017,m2.example.com:27017/app?replicaSet=rs0',
    secrets: ['Sierra-Nevada-5'],
  },
  { kind: 'connection_string', form: 'redis:// empty user', text: 'REDIS_URL=redis://:Thimble44Needle@cache.example.com:6379/0', secrets: ['Thimble44Needle'] },
  {
    kind: 'connection_string',
    form: 'rediss://default:',
    text: "const redis = new Redis('rediss://default:Anchor7Chain9@eu1-cache.example.net:6380');",
    secrets: ['Anchor7Chain9'],
  },
  { kind: 'connection_string', form: 'amqp://', text: 'CELERY_BROKER_URL = "amqp://worker:Hare-Burrow-32@rabbit:5672/vhost"', secrets: ['Hare-Burrow-32'] },
  { kind: 'connection_string', form: 'amqps:// yaml', text: 'broker:\n  url: amqps://svc:Otter9Stream4@mq.example.com:5671', secrets: ['Otter9Stream4'] },
  {
    kind: 'connection_string',
    form: 'SQL Server ;Password=',
    text: 'Server=tcp:sql.example.com,1433;Database=app;User ID=app;Password=Cactus!Bloom6;Encrypt=true;',
    secrets: ['Cactus!Bloom6'],
  },
  { kind: 'connection_string', form: 'password with @ encoded', text: 'postgres://report:Fig%40Leaf2026@reports.example.com/app', secrets: ['Fig%40Leaf2026'] },

  // ── git remotes and credential files ──────────────────────────────────────────────
  {
    kind: 'git_credentials',
    form: 'https://user:token@github.com',
    text: `git remote add origin https://octo:${GITHUB}@github.com/acme/api.git`,
    secrets: [GITHUB],
  },
  { kind: 'git_credentials', form: 'oauth2:glpat', text: `git clone https://oauth2:${GITLAB}@gitlab.example.com/team/repo.git`, secrets: [GITLAB] },
  {
    kind: 'git_credentials',
    form: 'x-access-token',
    text: 'git push https://x-access-token:ghs_Pq8Lm3Xv7Rt2Wz9Hn4Yc1Bd6Fs5Jg0Ke2Ua@github.com/acme/site.git HEAD',
    secrets: ['ghs_Pq8Lm3Xv7Rt2Wz9Hn4Yc1Bd6Fs5Jg0Ke2Ua'],
  },
  {
    kind: 'git_credentials',
    form: 'plain password remote',
    text: 'origin\thttps://deploy:PlainPass99x@git.example.com/infra/tf.git (fetch)',
    secrets: ['PlainPass99x'],
  },
  { kind: 'git_credentials', form: '.git-credentials line', text: 'https://jdoe:Velvet-Moth-12@bitbucket.org', secrets: ['Velvet-Moth-12'] },
  { kind: 'git_credentials', form: '.netrc', text: 'machine api.example.com login deploy password N3tRcPass2026', secrets: ['N3tRcPass2026'] },
  { kind: 'git_credentials', form: '.netrc multi-line', text: 'machine github.com\n  login octo\n  password Gingko-Leaf-77', secrets: ['Gingko-Leaf-77'] },
  {
    kind: 'git_credentials',
    form: 'pip index-url',
    text: '[global]\nindex-url = https://pypi-user:Shale4Slate8@pypi.example.com/simple',
    secrets: ['Shale4Slate8'],
  },

  // ── docker ────────────────────────────────────────────────────────────────────────
  { kind: 'docker', form: 'docker login -p', text: 'docker login -u ci -p Dock3rPass2026 registry.example.com', secrets: ['Dock3rPass2026'] },
  { kind: 'docker', form: 'docker login --password', text: 'docker login --username ci --password Whale-Song-48 ghcr.io', secrets: ['Whale-Song-48'] },
  {
    kind: 'docker',
    form: 'docker run -e X_PASSWORD=',
    text: 'docker run -d -e POSTGRES_PASSWORD=PgDocker77x -p 5432:5432 postgres:16',
    secrets: ['PgDocker77x'],
  },
  {
    kind: 'docker',
    form: 'compose environment list',
    text: 'services:\n  db:\n    image: mysql:8\n    environment:\n      - MYSQL_ROOT_PASSWORD=Sakura!2026x\n      - MYSQL_DATABASE=app',
    secrets: ['Sakura!2026x'],
  },
  { kind: 'docker', form: 'compose environment map', text: 'environment:\n  REDIS_PASSWORD: Lilac9Bloom3\n  REDIS_PORT: 6379', secrets: ['Lilac9Bloom3'] },
  {
    kind: 'docker',
    form: 'config.json auth',
    text: `{"auths": {"registry.example.com": {"auth": "${b64('ci:Juniper-Berry-5')}"}}}`,
    secrets: [b64('ci:Juniper-Berry-5')],
  },
  { kind: 'docker', form: 'Dockerfile ENV', text: 'ENV API_TOKEN=Tk7Lm2Qx9Vr4Wz8Hn3Yc', secrets: ['Tk7Lm2Qx9Vr4Wz8Hn3Yc'] },
  {
    kind: 'docker',
    form: 'build-arg',
    text: 'docker build --build-arg NPM_TOKEN=npm_Xq8Lm3Vt7Rz2Wn9Kp4Hc5Yd1Bs6Fg0Ja2Ke4 .',
    secrets: ['npm_Xq8Lm3Vt7Rz2Wn9Kp4Hc5Yd1Bs6Fg0Ja2Ke4'],
  },

  // ── kubernetes ──────────────────────────────────────────────────────────────────────
  {
    kind: 'k8s_secret',
    form: 'Secret data (base64)',
    text: `apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: ${b64('Kube!Pass88x')}\n  username: ${b64('app')}`,
    secrets: [b64('Kube!Pass88x')],
  },
  {
    kind: 'k8s_secret',
    form: 'stringData',
    text: 'kind: Secret\nstringData:\n  DB_PASSWORD: "Helm-Chart-2026"\n  API_KEY: "Ak9Lm3Qx7Vt2Wz8Rn4"',
    secrets: ['Helm-Chart-2026', 'Ak9Lm3Qx7Vt2Wz8Rn4'],
  },
  {
    kind: 'k8s_secret',
    form: 'kubectl --from-literal',
    text: 'kubectl create secret generic db --from-literal=username=app --from-literal=password=Kelp7Forest2',
    secrets: ['Kelp7Forest2'],
  },
  {
    kind: 'k8s_secret',
    form: 'env value in a pod spec',
    text: 'env:\n  - name: DB_PASSWORD\n    value: "Basalt!Column4"\n  - name: LOG_LEVEL\n    value: info',
    secrets: ['Basalt!Column4'],
  },
  {
    kind: 'k8s_secret',
    form: 'token in kubeconfig',
    text: 'users:\n- name: ci\n  user:\n    token: Kc8Lm3Qx7Vt2Wz9Rn4Hd5Yp1',
    secrets: ['Kc8Lm3Qx7Vt2Wz9Rn4Hd5Yp1'],
  },

  // ── env files, yaml, json, toml, code assignments ─────────────────────────────────────
  { kind: 'assignment', form: '.env', text: 'DB_PASSWORD=Heron!Marsh31\nSTRIPE_SECRET=Sr8Lm3Qx7Vt2Wz9Kn4', secrets: ['Heron!Marsh31', 'Sr8Lm3Qx7Vt2Wz9Kn4'] },
  { kind: 'assignment', form: 'export', text: `export OPENAI_API_KEY=${OPENAI}`, secrets: [OPENAI] },
  { kind: 'assignment', form: 'yaml', text: 'database:\n  user: app\n  password: Cinder!Block9', secrets: ['Cinder!Block9'] },
  { kind: 'assignment', form: 'json', text: `{"anthropic_api_key": "${ANTHROPIC}", "model": "x"}`, secrets: [ANTHROPIC] },
  { kind: 'assignment', form: 'toml', text: '[auth]\ntoken = "Tm8Lq3Xv7Rz2Wn9Kp4Hc"', secrets: ['Tm8Lq3Xv7Rz2Wn9Kp4Hc'] },
  { kind: 'assignment', form: 'python os.environ[]', text: 'os.environ["API_KEY"] = "Ae7Lm2Qx9Vr4Wz8Hn3Yc5"', secrets: ['Ae7Lm2Qx9Vr4Wz8Hn3Yc5'] },
  { kind: 'assignment', form: 'go :=', text: 'password := "Gopher!Burrow55"', secrets: ['Gopher!Burrow55'] },
  { kind: 'assignment', form: 'java properties', text: 'spring.datasource.password=Spring!Boot2026', secrets: ['Spring!Boot2026'] },
  { kind: 'assignment', form: 'sshpass -p', text: "sshpass -p 'Quokka!Smile7' ssh deploy@bastion.example.com", secrets: ['Quokka!Smile7'] },
  { kind: 'assignment', form: 'redis-cli -a', text: 'redis-cli -h cache.example.com -a Thimble44Needle ping', secrets: ['Thimble44Needle'] },
  {
    kind: 'assignment',
    form: 'aws configure set',
    text: 'aws configure set aws_secret_access_key Wz8Rn4Hc9Yd5Kp1Ts6Gb0Fa3Lm7Qx2Vt8Nw5Ej1',
    secrets: ['Wz8Rn4Hc9Yd5Kp1Ts6Gb0Fa3Lm7Qx2Vt8Nw5Ej1'],
  },
  { kind: 'assignment', form: 'htpasswd -b', text: 'htpasswd -b -c .htpasswd admin Lichen-Rock-93', secrets: ['Lichen-Rock-93'] },
];

/**
 * Clean text that looks close to the forms above: nothing here may be replaced or flagged.
 * The first two are the false positives a held-out campaign found.
 */
export const CLEAN_LOOKALIKES: string[] = [
  // biome-ignore lint/suspicious/noTemplateCurlyInString: source text that holds a template, on purpose
  "`## echolens gate: ${result.verdict === 'pass' ? '✅ pass' : '❌ fail'}`",
  "const TOKEN_HEADER = 'x-echolens-token';",
  'headers[TOKEN_HEADER] = token;',
  "status === 'pass' ? 'all checks pass' : 'some fail'",
  'docker run -d -p 5432:5432 -u 1000:1000 postgres:16',
  'docker run --rm -u node:node -v "$PWD:/app" node:22 npm test',
  'git push -u origin main',
  'mysql -u root -p appdb',
  'curl -u "$API_USER:$API_PASS" https://api.example.com',
  'conn = psycopg.connect(host=host, password=password, dbname=db)',
  'requests.get(url, auth=(user, password))',
  'client = Client(password=settings.DB_PASSWORD)',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: source text that holds a template, on purpose
  'const url = `https://api.example.com/v1?token=${token}&api_key=${apiKey}`;',
  'ip -6 addr add 2001:db8:85a3:0:0:8a2e:370:7334/64 dev eth0',
  'The job ran at 12:30:45 and again at 13:05:10.',
  "const word = ['alpha', 'beta', 'gamma', 'delta'].join('');",
  "const PREFIXES = ['xoxb-', 'xoxp-', 'xoxa-', 'xoxe-', 'xoxr-', 'xoxs-'];",
  "const label = 'Session ' + 'summary: ' + count;",
  'forEachChildInJSDocTag(node); isES2015OrLaterConstructorName(name); getJSDocCommentsAndTags(host);',
  'env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db\n        key: password',
  'machine github.com login octo password $GITHUB_TOKEN',
  'redis-cli -h cache.example.com ping',
  'htpasswd -c .htpasswd admin',
  'sshpass -f ~/.ssh/pass.txt ssh host',
  // Inside JSON `"~standard\"` is a quoted key, not `~user\` (discovery once learned "standard" here).
  'const result = schema["~standard"].validate(value); this["~validate"](data); const CATCH = "~constantCatch";',
  'const CREDENTIAL_VERIFICATION_URL = "https://sts.example.com?Action=GetCallerIdentity&Version=2011-06-15";',
  'this.credentialSourceType = \'programmatic\'; ClientSecretPost = "ClientSecretPost";',
  "const subjectTokenType = 'urn:ietf:params:oauth:token-type:id_token';",
  'Code_contained_in_a_class_is_evaluated_in_JavaScript_s_strict_mode_which_does_not_allow_this_use_of_0_For_more_information_see_the_docs_on_strict_mode_and_classes_and_modules_and_more_words',
];

/**
 * Forms with a user `{u}` and a password `{p}` slot, filled with generated passwords of several
 * styles (words and a year, random letters and digits, symbols, lower case and digits, short).
 */
export const PASSWORD_TEMPLATES: string[] = [
  'curl -u {u}:{p} https://api.example.com/x',
  'curl --user={u}:{p} https://api.example.com/x',
  "curl -s -u '{u}:{p}' https://api.example.com/x",
  'mysql -h db -u {u} -p{p} app',
  "mysql -u {u} -p'{p}' app",
  'mysql -u {u} --password={p} app',
  'db.example.com:5432:app:{u}:{p}',
  'requests.get(url, auth=("{u}", "{p}"))',
  "requests.post(url, auth=('{u}', '{p}'), json=body)",
  "fetch(url, { headers: { Authorization: 'Basic ' + btoa('{u}:{p}') } })",
  'token = base64.b64encode(b"{u}:{p}").decode()',
  'docker login -u {u} -p {p} registry.example.com',
  'echo "{p}" | docker login -u {u} --password-stdin registry.example.com',
  'sshpass -p "{p}" ssh {u}@host.example.com',
  'redis-cli -a {p} ping',
  'machine host.example.com login {u} password {p}',
  'postgres://{u}:{p}@db.example.com/app',
  'git clone https://{u}:{p}@git.example.com/r.git',
  'PGPASSWORD={p} psql -U {u}',
  'export DB_PASSWORD={p}',
  'DB_PASSWORD="{p}"',
  'password: {p}',
  '"password": "{p}"',
  'kubectl create secret generic x --from-literal=password={p}',
  'jdbc:mysql://db:3306/app?user={u}&password={p}',
  'wget --http-user={u} --http-password={p} https://x.example.com/f',
  'smbclient //srv/share -U {u}%{p}',
  'ldapsearch -x -D cn=admin,dc=example,dc=com -w {p} -b dc=example,dc=com',
];

const WORDS = ['Winter', 'Harbor', 'Quartz', 'Falcon', 'Meadow', 'Copper', 'Lantern', 'Sierra', 'Tundra', 'Maple'];
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Password generators of different styles, driven by `random` (a seeded generator). */
export function passwordStyles(random: () => number): Array<() => string> {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const chars = (alphabet: string, n: number) => Array.from({ length: n }, () => pick([...alphabet])).join('');
  return [
    () => `${pick(WORDS)}${1900 + Math.floor(random() * 200)}${pick(WORDS)}${pick(['!', '#', '?', '*', ''])}`,
    () => chars(ALNUM, 16),
    () => chars(ALNUM, 3) + chars('!#%^*_+=.?-', 1) + chars(ALNUM, 8) + chars('!#%^*_+=.?', 1),
    () => `${chars('abcdefghijklmnopqrstuvwxyz', 6)}${chars('0123456789', 3)}`,
    () => chars(ALNUM, 6),
  ];
}
