import { defineGroup } from '../define-command';
import { tokensCreateCommand } from './tokens-create';
import { tokensListCommand } from './tokens-list';
import { tokensRevokeCommand } from './tokens-revoke';

export const tokensCommand = defineGroup('tokens', 'access tokens: create, list, revoke', [
  tokensCreateCommand,
  tokensListCommand,
  tokensRevokeCommand,
]);
