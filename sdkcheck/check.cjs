// Runs the official CNPJá client (@cnpja/sdk, pinned in package-lock.json)
// against a server: node check.cjs BASE_URL API_KEY CCC_TAX_ID SUFRAMA_TAX_ID ZIP
// Prints one JSON object: per SDK method, {data}, {pdf, bytes} or {error}.
'use strict';
const { Cnpja } = require('@cnpja/sdk');

// collect walks a search's pages: {pages, keys}.
async function collect(pages, key) {
  const out = { pages: 0, keys: [] };
  for await (const records of pages) {
    out.pages++;
    out.keys.push(...records.map(key));
  }
  return out;
}

async function main() {
  const [baseUrl, apiKey, cccTaxId, suframaTaxId, zip, listTaxIds] = process.argv.slice(2);
  // No retries: a 503 is an answer to check, not something to wait out.
  const cnpja = new Cnpja({ baseUrl, apiKey, retryLimit: 0 });
  let list, exportId;
  const calls = {
    'credit.read': () => cnpja.credit.read(),
    'zip.read': () => cnpja.zip.read({ code: zip }),
    'ccc.read': () => cnpja.ccc.read({ taxId: cccTaxId, states: ['ALL'] }),
    'ccc.certificate': () => cnpja.ccc.certificate({ taxId: cccTaxId }),
    'suframa.read': () => cnpja.suframa.read({ taxId: suframaTaxId }),
    'suframa.certificate': () => cnpja.suframa.certificate({ taxId: suframaTaxId }),
    // The searches, iterated to their last page as the client does.
    'office.search': () => collect(cnpja.office.search({ 'address.state.in': ['SP'], limit: 7 }), (r) => r.taxId),
    'person.search': () => collect(cnpja.person.search({ 'type.in': ['NATURAL'], limit: 10 }), (r) => r.id),
    // The list service, each method in a user's order: make, read, change,
    // find, export (waiting for it), read its files, delete.
    'list.create': async () => {
      list = await cnpja.list.create({ title: 'Fornecedores', items: listTaxIds.split(',') });
      await cnpja.list.create({ title: 'Sócios', query: { 'address.state.in': ['SP'] }, limit: 3 });
      return list;
    },
    'list.read': () => cnpja.list.read({ listId: list.id }),
    'list.update': () => cnpja.list.update({ listId: list.id, description: 'Unidade de Manaus' }),
    'list.search': () => collect(cnpja.list.search({ limit: 1 }), (r) => r.title),
    'list.createExport': async () => {
      exportId = (await cnpja.list.createExport({ listId: list.id, options: { simples: true } })).id;
      return { id: exportId };
    },
    'list.readExport': async () => {
      for (let i = 0; i < 100; i++) {
        const x = await cnpja.list.readExport({ listId: list.id, exportId });
        if (x.status === 'COMPLETED' || x.status === 'FAILED') {
          // Each link opens without a credential, as the client's users open them.
          x.files = {};
          for (const link of x.links) {
            const res = await fetch(link.url);
            const body = Buffer.from(await res.arrayBuffer());
            x.files[link.type] = { status: res.status, magic: body.subarray(0, 2).toString('latin1'), bytes: body.length };
          }
          return x;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error('the export did not complete within 10 s');
    },
    'list.searchExport': () => collect(cnpja.list.searchExport({ listId: list.id }), (r) => r.id),
    'list.delete': async () => {
      await cnpja.list.delete({ listId: list.id });
      try {
        await cnpja.list.read({ listId: list.id });
        return { deleted: false };
      } catch (e) {
        return { deleted: e.code === 404 };
      }
    },
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
