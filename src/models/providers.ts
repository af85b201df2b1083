/**
 * The providers a model reference may name, and how each is reached.
 * Keys are read from the environment only, at adapter creation.
 */

export type ProviderKind =
  | 'openai'
  | 'anthropic'
  | 'azure'
  | 'mistral'
  | 'groq'
  | 'deepseek'
  | 'google'
  | 'vertex'
  | 'bedrock'
  | 'compatible'
  | 'local'
  | 'sim'
  | 'replay';

export interface ProviderSpec {
  name: string;
  kind: ProviderKind;
  /** Base URL used when the reference has no `@baseURL` (and no base-URL variable is set). */
  defaultBaseURL?: string;
  /** Environment variable overriding the default base URL. */
  baseURLEnv?: string;
  /** Environment variable holding the API key. */
  keyEnv?: string;
  /** True when a call cannot work without the key. */
  keyRequired: boolean;
  /** True when the reference must carry `@baseURL`. */
  baseURLRequired?: boolean;
  /** Other environment variables the provider reads (project, region, alternative credentials); shown by `echolens models`. */
  otherEnv?: readonly string[];
  description: string;
  example: string;
}

export const PROVIDERS: readonly ProviderSpec[] = [
  {
    name: 'openai',
    kind: 'openai',
    defaultBaseURL: 'https://api.openai.com/v1',
    baseURLEnv: 'OPENAI_BASE_URL',
    keyEnv: 'OPENAI_API_KEY',
    keyRequired: true,
    description: 'OpenAI chat completions',
    example: 'openai:gpt-4.1-mini',
  },
  {
    name: 'anthropic',
    kind: 'anthropic',
    defaultBaseURL: 'https://api.anthropic.com/v1',
    baseURLEnv: 'ANTHROPIC_BASE_URL',
    keyEnv: 'ANTHROPIC_API_KEY',
    keyRequired: true,
    description: 'Anthropic Messages API',
    example: 'anthropic:claude-sonnet-4-5',
  },
  {
    name: 'vllm',
    kind: 'compatible',
    defaultBaseURL: 'http://127.0.0.1:8000/v1',
    keyEnv: 'VLLM_API_KEY',
    keyRequired: false,
    description: 'vLLM OpenAI-compatible server',
    example: 'vllm:Qwen/Qwen3-4B',
  },
  {
    name: 'ollama',
    kind: 'compatible',
    defaultBaseURL: 'http://127.0.0.1:11434/v1',
    keyRequired: false,
    description: 'Ollama OpenAI-compatible endpoint',
    example: 'ollama:qwen3:4b',
  },
  {
    name: 'llamacpp',
    kind: 'compatible',
    defaultBaseURL: 'http://127.0.0.1:8080/v1',
    keyEnv: 'LLAMACPP_API_KEY',
    keyRequired: false,
    description: 'llama.cpp server (llama-server)',
    example: 'llamacpp:default',
  },
  {
    name: 'lmstudio',
    kind: 'compatible',
    defaultBaseURL: 'http://127.0.0.1:1234/v1',
    keyRequired: false,
    description: 'LM Studio local server',
    example: 'lmstudio:qwen3-4b',
  },
  {
    name: 'openrouter',
    kind: 'compatible',
    defaultBaseURL: 'https://openrouter.ai/api/v1',
    keyEnv: 'OPENROUTER_API_KEY',
    keyRequired: true,
    description: 'OpenRouter',
    example: 'openrouter:meta-llama/llama-3.3-70b-instruct',
  },
  {
    name: 'together',
    kind: 'compatible',
    defaultBaseURL: 'https://api.together.xyz/v1',
    keyEnv: 'TOGETHER_API_KEY',
    keyRequired: true,
    description: 'Together AI',
    example: 'together:meta-llama/Llama-3.3-70B-Instruct-Turbo',
  },
  {
    name: 'azure',
    kind: 'azure',
    baseURLEnv: 'AZURE_OPENAI_BASE_URL',
    keyEnv: 'AZURE_API_KEY',
    keyRequired: true,
    description: 'Azure OpenAI chat completions (model = deployment name; base URL https://<resource>.openai.azure.com/openai)',
    example: 'azure:my-gpt-4.1-deployment@https://my-resource.openai.azure.com/openai',
  },
  {
    name: 'mistral',
    kind: 'mistral',
    defaultBaseURL: 'https://api.mistral.ai/v1',
    baseURLEnv: 'MISTRAL_BASE_URL',
    keyEnv: 'MISTRAL_API_KEY',
    keyRequired: true,
    description: 'Mistral AI chat completions',
    example: 'mistral:mistral-small-latest',
  },
  {
    name: 'groq',
    kind: 'groq',
    defaultBaseURL: 'https://api.groq.com/openai/v1',
    baseURLEnv: 'GROQ_BASE_URL',
    keyEnv: 'GROQ_API_KEY',
    keyRequired: true,
    description: 'Groq chat completions',
    example: 'groq:llama-3.3-70b-versatile',
  },
  {
    name: 'deepseek',
    kind: 'deepseek',
    defaultBaseURL: 'https://api.deepseek.com',
    baseURLEnv: 'DEEPSEEK_BASE_URL',
    keyEnv: 'DEEPSEEK_API_KEY',
    keyRequired: true,
    description: 'DeepSeek chat completions',
    example: 'deepseek:deepseek-chat',
  },
  {
    name: 'google',
    kind: 'google',
    defaultBaseURL: 'https://generativelanguage.googleapis.com/v1beta',
    baseURLEnv: 'GOOGLE_GENERATIVE_AI_BASE_URL',
    keyEnv: 'GOOGLE_GENERATIVE_AI_API_KEY',
    keyRequired: true,
    description: 'Google Gemini API (generateContent)',
    example: 'google:gemini-2.5-flash',
  },
  {
    name: 'vertex',
    kind: 'vertex',
    // The host root; echolens adds /v1beta1/projects/<project>/locations/<location>/publishers/google.
    baseURLEnv: 'GOOGLE_VERTEX_BASE_URL',
    keyEnv: 'GOOGLE_VERTEX_API_KEY',
    keyRequired: false,
    otherEnv: ['GOOGLE_VERTEX_PROJECT', 'GOOGLE_VERTEX_LOCATION', 'GOOGLE_VERTEX_ACCESS_TOKEN', 'GOOGLE_APPLICATION_CREDENTIALS'],
    description:
      'Gemini on Google Cloud Vertex AI (GOOGLE_VERTEX_PROJECT required; location default us-central1; credentials: Application Default Credentials, GOOGLE_VERTEX_ACCESS_TOKEN, or an express-mode GOOGLE_VERTEX_API_KEY)',
    example: 'vertex:gemini-2.5-flash',
  },
  {
    name: 'bedrock',
    kind: 'bedrock',
    // Default: https://bedrock-runtime.<AWS_REGION>.amazonaws.com
    baseURLEnv: 'AWS_ENDPOINT_URL_BEDROCK_RUNTIME',
    keyEnv: 'AWS_BEARER_TOKEN_BEDROCK',
    keyRequired: false,
    otherEnv: ['AWS_REGION', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'],
    description:
      'Amazon Bedrock Converse API (AWS_REGION required; credentials: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY [+ AWS_SESSION_TOKEN], or a Bedrock API key AWS_BEARER_TOKEN_BEDROCK)',
    example: 'bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0',
  },
  {
    name: 'openai-compatible',
    kind: 'compatible',
    keyEnv: 'OPENAI_COMPATIBLE_API_KEY',
    keyRequired: false,
    baseURLRequired: true,
    description: 'any OpenAI-compatible chat-completions server (baseURL required)',
    example: 'openai-compatible:my-model@http://127.0.0.1:9000/v1',
  },
  {
    name: 'local',
    kind: 'local',
    keyRequired: false,
    description: 'in-process GGUF model via the optional node-llama-cpp package',
    example: 'local:hf:Qwen/Qwen3-0.6B-GGUF:Q8_0',
  },
  {
    name: 'sim',
    kind: 'sim',
    keyRequired: false,
    description: 'deterministic simulated model (a registered profile; measures nothing)',
    example: 'sim:echo',
  },
  {
    name: 'replay',
    kind: 'replay',
    keyRequired: false,
    description: 'answers recorded in a run store, replayed without calling anything',
    example: 'replay:runs/run.db',
  },
];

export function providerNames(): string[] {
  return PROVIDERS.map((p) => p.name);
}

export function getProvider(name: string): ProviderSpec | undefined {
  return PROVIDERS.find((p) => p.name === name);
}
