import Router from '@koa/router';
import type { AppDeps, AppState } from '../../app.ts';

export function documentRoutes(_deps: AppDeps): Router<AppState> {
  return new Router<AppState>();
}
