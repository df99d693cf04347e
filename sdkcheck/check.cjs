// Runs the official CNPJá client (@cnpja/sdk, pinned in package-lock.json)
// against a server: node check.cjs BASE_URL API_KEY CCC_TAX_ID SUFRAMA_TAX_ID ZIP
// Prints one JSON object: per SDK method, {data}, {pdf, bytes} or {error}.
'use strict';
const { Cnpja } = require('@cnpja/sdk');

async function main() {
  const [baseUrl, apiKey, cccTaxId, suframaTaxId, zip] = process.argv.slice(2);
  // No retries: a 503 is an answer to check, not something to wait out.
  const cnpja = new Cnpja({ baseUrl, apiKey, retryLimit: 0 });
  const calls = {
    'credit.read': () => cnpja.credit.read(),
    'zip.read': () => cnpja.zip.read({ code: zip }),
    'ccc.read': () => cnpja.ccc.read({ taxId: cccTaxId, states: ['ALL'] }),
    'ccc.certificate': () => cnpja.ccc.certificate({ taxId: cccTaxId }),
    'suframa.read': () => cnpja.suframa.read({ taxId: suframaTaxId }),
    'suframa.certificate': () => cnpja.suframa.certificate({ taxId: suframaTaxId }),
  };
  const out = {};
  for (const [name, call] of Object.entries(calls)) {
    try {
      const v = await call();
      out[name] = v instanceof Uint8Array
        ? { pdf: Buffer.from(v.subarray(0, 5)).toString('latin1'), bytes: v.length }
        : { data: v };
    } catch (e) {
      out[name] = { error: { code: e.code, message: e.message } };
    }
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack || e) + '\n');
  process.exit(1);
});
