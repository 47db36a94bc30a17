// The TypeScript SDK's OAuth client against `wicket mcp --http` with the
// built-in issuer, driven by agent/e2e_2026_oauth_builtin_test.go.
// Usage: node ts_client.mjs SDK_DIR ENDPOINT [CLIENT_ID_METADATA_URL]
// It prints "AUTHORIZE <url>" and reads the authorization code on stdin
// (the test plays the browser and the operator), then prints the tools
// it is served ("TOOLS a b c") and the granted scope ("SCOPE ...").
import { pathToFileURL } from 'node:url';
import { createInterface } from 'node:readline';

const [sdkDir, endpoint, cimd] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(`${sdkDir}/dist/esm/${p}`).href);
const { Client } = await load('client/index.js');
const { StreamableHTTPClientTransport } = await load('client/streamableHttp.js');
const { UnauthorizedError } = await load('client/auth.js');

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
let info, tokens, verifier;
const redirect = 'http://127.0.0.1:1/callback';
const provider = {
  get redirectUrl() { return redirect; },
  clientMetadataUrl: cimd || undefined,
  get clientMetadata() {
    return { client_name: 'TS SDK e2e', redirect_uris: [redirect], grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'], token_endpoint_auth_method: 'none' };
  },
  clientInformation() { return info; },
  saveClientInformation(i) { info = i; },
  tokens() { return tokens; },
  saveTokens(t) { tokens = t; },
  redirectToAuthorization(url) { console.log(`AUTHORIZE ${url.href}`); },
  saveCodeVerifier(v) { verifier = v; },
  codeVerifier() { return verifier; },
};

const connect = async () => {
  const transport = new StreamableHTTPClientTransport(new URL(endpoint), { authProvider: provider });
  const client = new Client({ name: 'wicket-e2e-ts', version: '1' });
  await client.connect(transport);
  return client;
};

let client;
try {
  client = await connect();
} catch (e) {
  if (!(e instanceof UnauthorizedError)) throw e;
  const { value: code } = await lines.next();
  const transport = new StreamableHTTPClientTransport(new URL(endpoint), { authProvider: provider });
  await transport.finishAuth(code.trim());
  client = await connect();
}
const { tools } = await client.listTools();
console.log(`TOOLS ${tools.map((t) => t.name).join(' ')}`);
console.log(`SCOPE ${tokens.scope}`);
console.log(`CLIENT ${info.client_id}`);
await client.close();
process.exit(0);
