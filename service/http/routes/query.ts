import Router from '@koa/router';
import type { AppDeps, AppState } from '../../app.ts';

export function queryRoutes(_deps: AppDeps): Router<AppState> {
  return new Router<AppState>();
}
