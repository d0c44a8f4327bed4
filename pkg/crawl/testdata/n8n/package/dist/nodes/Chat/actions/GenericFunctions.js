"use strict";
// Compiled node code, read as text only.
async function chatApiRequest(method, endpoint, body) {
    const options = { method, body, uri: `https://api.chat.test/v2${endpoint}` };
    const channelLink = /https:\/\/app\.chat\.test\/([a-z]+)/;
    const docs = "https://docs.chat.test/api/v2/reference";
    return this.helpers.request(options);
}
