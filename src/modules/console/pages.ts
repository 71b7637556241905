// The console's pages, put together once at start: one layout
// (public/layout.html: the head, the header with its navigation and the
// sign-in form every page shows until the cookie signs the browser in) around
// each page's own content (public/<page>.html, its `#content` section). The
// page's own link in the navigation is marked here, so the header is right
// before any script runs. Nothing is built ahead: edit the files and restart.
import { type ConsoleAsset, consoleAsset } from './assets.js';

export interface ConsolePage {
  /** The route that serves it. */
  route: string;
  /** Its content in public/. */
  file: string;
  /** The title before "· Workspace console". */
  title: string;
  /** Its module script in public/. */
  script: string;
  /** Stylesheets it needs besides console.css (loaded before it, so console.css has the last word). */
  styles?: string[];
  /** The navigation link marked as the current page. */
  nav: string;
  /** A class of the page's <main> (`wide`: charts take the whole window's width). */
  mainClass?: string;
}

export const CONSOLE_PAGES: readonly ConsolePage[] = [
  { route: '/console', file: 'index.html', title: 'Talk to your agent', script: 'call-console.js', nav: '/console' },
  { route: '/console/calls', file: 'calls.html', title: 'Calls', script: 'calls.js', nav: '/console/calls' },
  { route: '/console/calls/:id', file: 'call.html', title: 'Call', script: 'call.js', nav: '/console/calls' },
  {
    route: '/console/pathways',
    file: 'pathways.html',
    title: 'Pathways',
    script: 'pathways.js',
    nav: '/console/pathways',
  },
  {
    route: '/console/analytics',
    file: 'analytics.html',
    title: 'Analytics',
    script: 'analytics.js',
    styles: ['uplot.css'],
    nav: '/console/analytics',
    mainClass: 'wide',
  },
  { route: '/console/tests', file: 'tests.html', title: 'Agent tests', script: 'tests.js', nav: '/console/tests' },
  {
    route: '/console/campaigns',
    file: 'campaigns.html',
    title: 'Campaigns',
    script: 'campaigns.js',
    nav: '/console/campaigns',
  },
];

const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Replaces the one `slot` of `html` (a {{name}} or a tag the page changes); a layout without it is a mistake worth failing start-up for. */
function fill(html: string, slot: string, value: string): string {
  const at = html.indexOf(slot);
  if (at < 0 || html.indexOf(slot, at + 1) >= 0) throw new Error(`the console's layout must hold ${slot} once`);
  return html.slice(0, at) + value + html.slice(at + slot.length);
}

/** One page's HTML: the layout around the page's content, its title, script, stylesheets and current link. */
export function composePage(layout: string, content: string, page: ConsolePage): string {
  let html = fill(layout, '{{title}}', escapeHtml(page.title));
  html = fill(html, '{{script}}', escapeHtml(page.script));
  const styles = (page.styles ?? []).map(
    (name) => `<link rel="stylesheet" href="/console/assets/${escapeHtml(name)}">\n`,
  );
  html = fill(html, '{{stylesheets}}\n', styles.join(''));
  const main = '<main id="main" tabindex="-1">';
  if (page.mainClass) html = fill(html, main, `${main.slice(0, -1)} class="${escapeHtml(page.mainClass)}">`);
  // The link is marked in the layout alone: a page's content may link to the same place.
  html = fill(html, `<a href="${page.nav}">`, `<a href="${page.nav}" aria-current="page">`);
  return fill(html, '{{content}}\n', content);
}

/** Every page by route, from the console's files (loadConsoleAssets). */
export function composeConsolePages(
  assets: ReadonlyMap<string, ConsoleAsset>,
  pages: readonly ConsolePage[] = CONSOLE_PAGES,
): Map<string, ConsoleAsset> {
  const text = (name: string) => {
    const file = assets.get(name);
    if (!file) throw new Error(`the console's ${name} is missing`);
    return file.body.toString('utf8');
  };
  const layout = text('layout.html');
  return new Map(
    pages.map((page) => {
      for (const name of [page.script, ...(page.styles ?? [])]) text(name);
      const html = composePage(layout, text(page.file), page);
      return [page.route, consoleAsset(Buffer.from(html, 'utf8'), 'text/html; charset=utf-8')];
    }),
  );
}
