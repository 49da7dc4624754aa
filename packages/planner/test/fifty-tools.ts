import type { ToolExecutor } from '@switchyard/protocol';
import { fn } from './fixtures';

type Row = [namespace: string | undefined, name: string, description: string, properties?: Record<string, string>];

/** Fifty deferred tools across a few namespaces, the shape of a host with several MCP servers. */
const ROWS: Row[] = [
  ['mail__', 'send_message', 'Send an email message to one or more recipients.', { to: 'Recipient email addresses.', subject: 'Subject line.', body: 'Message body.' }],
  ['mail__', 'list_messages', 'List email messages in a mailbox folder.', { folder: 'Folder name, e.g. inbox.' }],
  ['mail__', 'read_message', 'Read the full content of one email message.', { message_id: 'Identifier of the message.' }],
  ['mail__', 'archive_message', 'Archive an email message so it leaves the inbox.', { message_id: 'Identifier of the message.' }],
  ['mail__', 'search_messages', 'Search email messages by sender, subject or text.', { query: 'Search words.' }],
  ['mail__', 'create_draft', 'Create an email draft without sending it.', { subject: 'Subject line.', body: 'Draft body.' }],
  ['calendar__', 'create_event', 'Create a calendar event with a title, start and end time.', { title: 'Event title.', start: 'Start time.', end: 'End time.' }],
  ['calendar__', 'list_events', 'List calendar events between two dates.', { from: 'First day.', to: 'Last day.' }],
  ['calendar__', 'delete_event', 'Delete a calendar event.', { event_id: 'Identifier of the event.' }],
  ['calendar__', 'find_free_time', 'Find free time slots shared by several attendees.', { attendees: 'People to invite.' }],
  ['calendar__', 'update_event', 'Move or rename a calendar event.', { event_id: 'Identifier of the event.', start: 'New start time.' }],
  ['github__', 'create_pull_request', 'Open a pull request from a branch.', { repo: 'Repository name.', head: 'Source branch.', base: 'Target branch.' }],
  ['github__', 'list_pull_requests', 'List open pull requests of a repository.', { repo: 'Repository name.' }],
  ['github__', 'review_pull_request', 'Submit a review on a pull request: approve or request changes.', { number: 'Pull request number.', verdict: 'approve or request_changes.' }],
  ['github__', 'merge_pull_request', 'Merge a pull request into its base branch.', { number: 'Pull request number.' }],
  ['github__', 'create_issue', 'Open an issue in a repository.', { title: 'Issue title.', body: 'Issue text.' }],
  ['github__', 'list_issues', 'List issues of a repository, filtered by label.', { label: 'Label to filter by.' }],
  ['github__', 'comment_issue', 'Add a comment to an issue.', { number: 'Issue number.', body: 'Comment text.' }],
  ['github__', 'get_file_contents', 'Read a file from a repository at a commit.', { path: 'File path in the repository.', ref: 'Branch or commit.' }],
  ['slack__', 'post_message', 'Post a chat message to a Slack channel.', { channel: 'Channel name.', text: 'Message text.' }],
  ['slack__', 'list_channels', 'List the Slack channels you can see.'],
  ['slack__', 'read_thread', 'Read the replies of a Slack thread.', { thread_ts: 'Thread timestamp.' }],
  ['slack__', 'add_reaction', 'Add an emoji reaction to a Slack message.', { emoji: 'Emoji name.' }],
  ['weather__', 'get_forecast', 'Weather forecast for the next days in a city.', { city: 'City name.', days: 'How many days.' }],
  ['weather__', 'get_current_weather', 'Current weather conditions in a city: temperature, wind, rain.', { city: 'City name.' }],
  ['weather__', 'get_air_quality', 'Air quality index and pollutants for a city.', { city: 'City name.' }],
  ['files__', 'read_file', 'Read a text file from the workspace.', { path: 'Path of the file.' }],
  ['files__', 'write_file', 'Write text to a file in the workspace, replacing it.', { path: 'Path of the file.', content: 'New content.' }],
  ['files__', 'list_directory', 'List the entries of a directory.', { path: 'Directory path.' }],
  ['files__', 'move_file', 'Move or rename a file.', { from: 'Old path.', to: 'New path.' }],
  ['files__', 'delete_file', 'Delete a file from the workspace.', { path: 'Path of the file.' }],
  ['db__', 'run_query', 'Run a read-only SQL query against the analytics database.', { sql: 'The SQL statement.' }],
  ['db__', 'list_tables', 'List tables of the analytics database.'],
  ['db__', 'describe_table', 'Describe the columns of a database table.', { table: 'Table name.' }],
  ['crm__', 'find_customer', 'Find a customer record by name or email.', { name: 'Customer name.' }],
  ['crm__', 'update_customer', 'Update fields of a customer record.', { customer_id: 'Identifier of the customer.' }],
  ['crm__', 'list_deals', 'List open sales deals and their stage.'],
  ['crm__', 'create_invoice', 'Create an invoice for a customer.', { amount: 'Amount in cents.', currency: 'Currency code.' }],
  ['maps__', 'geocode_address', 'Turn a street address into latitude and longitude.', { address: 'Street address.' }],
  ['maps__', 'get_directions', 'Driving or walking directions between two places.', { origin: 'Start place.', destination: 'End place.' }],
  ['maps__', 'nearby_places', 'Find restaurants, shops or other places near a location.', { kind: 'Kind of place.' }],
  ['docs__', 'search_docs', 'Search product documentation pages.', { query: 'Search words.' }],
  ['docs__', 'get_page', 'Fetch one documentation page by its URL.', { url: 'Page URL.' }],
  [undefined, 'translate_text', 'Translate text into another language.', { text: 'Text to translate.', language: 'Target language.' }],
  [undefined, 'summarize_text', 'Summarize a long text into a few sentences.', { text: 'Text to summarize.' }],
  [undefined, 'convert_currency', 'Convert an amount between currencies at the current rate.', { amount: 'Amount.', currency: 'Target currency code.' }],
  [undefined, 'generate_password', 'Generate a random strong password.', { length: 'Number of characters.' }],
  [undefined, 'set_reminder', 'Set a reminder that notifies you at a time.', { time: 'When to remind.', text: 'Reminder text.' }],
  [undefined, 'take_screenshot', 'Take a screenshot of the screen.'],
  [undefined, 'spell_check', 'Check spelling and grammar of a text.', { text: 'Text to check.' }],
];

/** Builds the fifty deferred tools (fresh objects each call). */
export function fiftyDeferredTools(): ToolExecutor[] {
  return ROWS.map(([namespace, name, description, properties = {}]) =>
    fn(name, {
      namespace,
      description,
      exposure: 'deferred',
      namespaceDescription: namespace ? `Tools of the ${namespace.replace(/_+$/, '')} server.` : undefined,
      parameters: {
        type: 'object',
        properties: Object.fromEntries(Object.entries(properties).map(([key, text]) => [key, { type: 'string', description: text }])),
      },
      outputSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
    }),
  );
}
