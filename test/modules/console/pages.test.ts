// How a console page is put together (src/modules/console/pages.ts): the one
// layout around the page's content, its title, script and stylesheets, its own
// link marked current; a layout that lost a slot stops the start.
import { describe, expect, it } from 'vitest';
import { loadConsoleAssets } from '../../../src/modules/console/assets.js';
import {
  CONSOLE_PAGES,
  type ConsolePage,
  composeConsolePages,
  composePage,
} from '../../../src/modules/console/pages.js';

const layout = [
  '<title>{{title}} · Workspace console</title>',
  '{{stylesheets}}',
  '<link rel="stylesheet" href="/console/assets/console.css">',
  '<script type="module" src="/console/assets/{{script}}"></script>',
  '<nav><a href="/console">Call</a><a href="/console/calls">Calls</a></nav>',
  '<main id="main" tabindex="-1">',
  '{{content}}',
  '</main>',
  '',
].join('\n');

const page: ConsolePage = {
  route: '/console/calls/:id',
  file: 'call.html',
  title: 'Call',
  script: 'call.js',
  nav: '/console/calls',
};

describe('composePage', () => {
  it('fills the layout with the page and marks its link in the navigation, not a link of its content', () => {
    const html = composePage(layout, '  <p><a href="/console/calls">All calls</a></p>\n', {
      ...page,
      title: 'A <b> & "c"',
      styles: ['uplot.css'],
      mainClass: 'wide',
    });
    expect(html).toBe(
      [
        '<title>A &lt;b&gt; &amp; &quot;c&quot; · Workspace console</title>',
        '<link rel="stylesheet" href="/console/assets/uplot.css">',
        '<link rel="stylesheet" href="/console/assets/console.css">',
        '<script type="module" src="/console/assets/call.js"></script>',
        '<nav><a href="/console">Call</a><a href="/console/calls" aria-current="page">Calls</a></nav>',
        '<main id="main" tabindex="-1" class="wide">',
        '  <p><a href="/console/calls">All calls</a></p>',
        '</main>',
        '',
      ].join('\n'),
    );
    expect(composePage(layout, '', page)).not.toContain('{{');
  });

  it("refuses a layout without a slot, with one twice, or without the page's navigation link", () => {
    expect(() => composePage(layout.replace('{{content}}\n', ''), '', page)).toThrow(/\{\{content\}\}/);
    expect(() => composePage(`${layout}{{title}}`, '', page)).toThrow(/\{\{title\}\} once/);
    expect(() => composePage(layout, '', { ...page, nav: '/console/tests' })).toThrow(/console\/tests/);
  });
});

describe('composeConsolePages', () => {
  it('builds every page from the console files, and names a file that is missing', () => {
    const assets = loadConsoleAssets();
    const pages = composeConsolePages(assets);
    expect([...pages.keys()]).toEqual(CONSOLE_PAGES.map((p) => p.route));
    for (const html of pages.values()) expect(html.type).toBe('text/html; charset=utf-8');
    assets.delete('tests.js');
    expect(() => composeConsolePages(assets)).toThrow("the console's tests.js is missing");
  });
});
