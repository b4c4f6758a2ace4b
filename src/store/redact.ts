// What a profile may not carry. Always: the credentials in the job's command (a URL's password or secret query,
// VAR=value named like a secret, AWS access key ids). With --redact (docs/side-effects.md): a secret flag's value, host
// names (host-0, host-1, ... the same name the same alias), absolute paths (~/..., relative to the working folder, else
// <abs>/ and their last name; /proc, /sys and /dev kept). Pure: strings in, strings out.
import { isAbsolute, relative } from 'node:path';
import type { Profile } from '../schema/profile.js';
import { redactUrl } from '../system/network/remote-spec.js';

/** What stands in for a secret. */
export const REDACTED = '<redacted>';

/** A flag or variable name that holds a secret: --token, --api-key, --password, HF_TOKEN, AWS_SECRET_ACCESS_KEY. */
const SECRET_NAME = /(token|secret|key|passw(or)?d|pwd|credential|auth)/i;
/** AWS access key ids (AKIA... long-term, ASIA... temporary): 20 characters. */
const AWS_KEY_ID = /\b(AKIA|ASIA)[0-9A-Z]{16}\b/g;
/** A URL, up to the next blank or quote. */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s'"<>]+/gi;
/** An absolute path in free text (not the /s of MB/s, a URL's //host or <abs>/), up to a blank, quote or punctuation. */
const PATH_IN_TEXT = /(?<![\w.~:/\\>-])\/[^\s'"`<>|;,()[\]{}]*/g;
/** Kernel file systems: their paths name no user, host or project. */
const KERNEL_PATHS = /^\/(proc|sys|dev)(\/|$)/;

/** Where a profile was made: the folders paths are written against. */
export interface RedactionPlaces {
  /** The user's home folder ($HOME); null when unknown. */
  home: string | null;
  /** The working folder of the command. */
  cwd: string;
}

/** A query parameter that carries a secret: a token, a key, a presigned signature or credential. */
const SECRET_QUERY = /(?:^|[?&#])[^=&#]*(token|secret|key|passw(or)?d|pwd|credential|auth|sig(nature)?)[^=&#]*=/i;

/** A URL with a user:password@ part or a secret query replaced by <redacted> (the rest as redactUrl shows it). */
function urlWithoutSecrets(url: string): string {
  const userinfo = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)@/i.exec(url);
  const withPassword = userinfo?.[2].includes(':');
  const query = /[?#].*$/.exec(url)?.[0] ?? '';
  const secretQuery = SECRET_QUERY.test(query);
  if (!withPassword && !secretQuery) return url;
  const clean = redactUrl(url);
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(clean)?.[0] ?? '';
  const withUser = withPassword
    ? `${scheme}${REDACTED}@${clean.slice(scheme.length)}`
    : userinfo
      ? `${scheme}${userinfo[2]}@${clean.slice(scheme.length)}`
      : clean;
  return withUser + (secretQuery ? `?${REDACTED}` : query);
}

/** Credentials out of free text: URLs' user:password@ and secret queries, AWS key ids. */
export function textWithoutSecrets(text: string): string {
  return text.replace(URL_IN_TEXT, urlWithoutSecrets).replace(AWS_KEY_ID, REDACTED);
}

/**
 * The job's command without the credentials a profile must never hold (URLs' secrets, HF_TOKEN=..., AWS key ids); with
 * `flags` (--redact) also a secret flag's value: --token VALUE, --api-key=VALUE.
 */
export function commandWithoutSecrets(argv: readonly string[], flags = false): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const assigned = /^(-{0,2})([A-Za-z_][\w.-]*)=(.*)$/s.exec(arg);
    if (assigned && SECRET_NAME.test(assigned[2]) && (assigned[1] === '' || flags)) {
      out.push(`${assigned[1]}${assigned[2]}=${REDACTED}`);
      continue;
    }
    out.push(textWithoutSecrets(arg));
    // --token VALUE: the next argument is the secret, unless it is another flag.
    if (
      flags &&
      /^--?[A-Za-z][\w.-]*$/.test(arg) &&
      SECRET_NAME.test(arg) &&
      i + 1 < argv.length &&
      !argv[i + 1].startsWith('-')
    ) {
      out.push(REDACTED);
      i++;
    }
  }
  return out;
}

/** Redaction of one profile's strings: the host names it names, the places it was made in. */
export class Redactor {
  private readonly aliases = new Map<string, string>();
  private hostPattern: RegExp | null = null;
  /** The secrets taken out of the job's command, taken out of any text too (the job may echo its arguments). */
  private readonly secrets: string[];

  constructor(
    private readonly places: RedactionPlaces,
    hostnames: readonly string[] = [],
    command: readonly string[] = [],
  ) {
    for (const name of hostnames) this.host(name);
    this.secrets = secretsOf(command).sort((a, b) => b.length - a.length);
  }

  /** The alias of a host name: host-0 for the first named, host-1 for the next; the same name, the same alias. */
  host(name: string): string {
    const known = this.aliases.get(name);
    if (known !== undefined) return known;
    const alias = `host-${new Set(this.aliases.values()).size}`;
    this.aliases.set(name, alias);
    // The short name of a fully qualified one (gpu-07 of gpu-07.cluster.local) is the same host.
    const short = name.split('.')[0];
    if (short !== name && short.length >= 3 && !this.aliases.has(short)) this.aliases.set(short, alias);
    this.hostPattern = null;
    return alias;
  }

  /** A path as it may be written: ~/... under home, relative under the working folder, else <abs>/ and its name. */
  path(path: string): string {
    if (!isAbsolute(path) || KERNEL_PATHS.test(path)) return path;
    const trimmed = path.length > 1 ? path.replace(/\/+$/, '') : path;
    const { home, cwd } = this.places;
    if (cwd !== '/' && (trimmed === cwd || trimmed.startsWith(cwd + '/'))) return relative(cwd, trimmed) || '.';
    if (home && home !== '/' && (trimmed === home || trimmed.startsWith(home + '/')))
      return '~' + trimmed.slice(home.length);
    const last = trimmed.split('/').filter(Boolean).pop();
    return last === undefined ? '<abs>/' : `<abs>/${last}`;
  }

  /** Free text with its credentials, host names and absolute paths redacted. */
  text(text: string): string {
    let withoutSecrets = textWithoutSecrets(text);
    for (const secret of this.secrets) withoutSecrets = withoutSecrets.split(secret).join(REDACTED);
    const withoutPaths = withoutSecrets.replace(PATH_IN_TEXT, (p) => this.path(p));
    return this.aliases.size === 0
      ? withoutPaths
      : withoutPaths.replace(this.hosts(), (name) => this.aliases.get(name)!);
  }

  /** The job's command, redacted argument by argument. */
  command(argv: readonly string[]): string[] {
    return commandWithoutSecrets(argv, true).map((arg) => {
      // --data=/home/u/x: the path after the = is a path too.
      const assigned = /^(--?[\w.-]+=)(\/.*)$/s.exec(arg);
      return assigned ? assigned[1] + this.text(assigned[2]) : this.text(arg);
    });
  }

  /** Every known host name as one pattern, longest first, whole names only. */
  private hosts(): RegExp {
    if (this.hostPattern) return this.hostPattern;
    const names = [...this.aliases.keys()].filter((n) => n.length > 0).sort((a, b) => b.length - a.length);
    const escaped = names.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    this.hostPattern = new RegExp(`(?<![\\w.-])(?:${escaped.join('|')})(?![\\w-]|\\.[\\w-])`, 'g');
    return this.hostPattern;
  }
}

/** The values --redact takes out of a command (a secret flag's or variable's), each at least 4 characters long. */
export function secretsOf(argv: readonly string[]): string[] {
  const redacted = commandWithoutSecrets(argv, true);
  const found: string[] = [];
  argv.forEach((arg, i) => {
    const out = redacted[i];
    if (out === arg) return;
    if (out === REDACTED) found.push(arg);
    else if (out.endsWith(`=${REDACTED}`)) found.push(arg.slice(out.length - REDACTED.length));
  });
  return [...new Set(found.filter((s) => s.length >= 4))];
}

/** Every host name a profile holds: the host's, each node's, each rank's node, the coordinator's; in that order. */
export function hostnamesOf(profile: Profile): string[] {
  const names: string[] = [profile.host.hostname, ...(profile.nodes ?? []).map((n) => n.hostname)];
  mapStrings(profile, (text, key) => {
    if (key === 'hostname') names.push(text);
    return text;
  });
  const coordinator = profile.options.nodes?.coordinator;
  // HOST:PORT, or [IPv6]:PORT.
  if (coordinator) names.push(coordinator.replace(/^\[(.*)\]:\d+$/, '$1').replace(/:\d+$/, ''));
  return [...new Set(names.filter((n) => n.length > 0))];
}

/** `value` with every string in it mapped (with the key that holds it); numbers, keys and structure unchanged. */
function mapStrings(value: unknown, map: (text: string, key: string) => string, key = ''): unknown {
  if (typeof value === 'string') return map(value, key);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, map));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, map, k)]));
  return value;
}

/** The profile with --redact applied to every string it holds; the job's command argument by argument. */
export function redactProfile(profile: Profile, places: RedactionPlaces): Profile {
  const redactor = new Redactor(places, hostnamesOf(profile), profile.command);
  const redacted = mapStrings(profile, (text) => redactor.text(text)) as Profile;
  return { ...redacted, command: redactor.command(profile.command) };
}
