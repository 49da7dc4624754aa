// Serves the example for a browser of your own: `pnpm --filter @switchyard/example-web-chat serve`,
// then open the printed address.
import { startWebChatServer } from './server';

const server = await startWebChatServer({ port: Number(process.env.PORT ?? 3000) });
console.log(`web chat on ${server.url} — try "check the stock", then "start the nightly report"`);
process.on('SIGINT', () => void server.close().then(() => process.exit(0)));
