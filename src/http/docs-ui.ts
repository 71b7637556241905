// The docs UI at /api/docs carries the product's name and mark, not the stock
// "Swagger UI" title and framework logo (issue 45). Everything is served by this
// server (the CSP allows same-origin and data: images only).
import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui';

export const productName = 'Workspace API';

/** A plain mark: the product's name on a dark tile, as SVG (the top bar shows it 40 px high). */
const logoSvg = `<svg xmlns="http://www.w3.org/2000/svg" width="260" height="40" viewBox="0 0 260 40">
<rect width="40" height="40" rx="8" fill="#1f6feb"/>
<path d="M9 12l5 16 6-12 6 12 5-16" fill="none" stroke="#fff" stroke-width="3" stroke-linejoin="round"/>
<text x="52" y="27" font-family="system-ui,-apple-system,Segoe UI,Roboto,sans-serif" font-size="20" font-weight="600" fill="#fff">${productName}</text>
</svg>`;

const faviconSvg = `<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 40 40">
<rect width="40" height="40" rx="8" fill="#1f6feb"/>
<path d="M9 12l5 16 6-12 6 12 5-16" fill="none" stroke="#fff" stroke-width="3" stroke-linejoin="round"/>
</svg>`;

export const docsUiOptions: FastifySwaggerUiOptions = {
  routePrefix: '/api/docs',
  uiConfig: { docExpansion: 'list', deepLinking: true },
  logo: { type: 'image/svg+xml', content: Buffer.from(logoSvg), href: '/api/docs' },
  theme: {
    title: `${productName} reference`,
    favicon: [
      { filename: 'favicon.svg', rel: 'icon', sizes: 'any', type: 'image/svg+xml', content: Buffer.from(faviconSvg) },
    ],
  },
};
