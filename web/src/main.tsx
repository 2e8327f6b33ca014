import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import { ApiError, setUnauthorizedHandler } from './api/client.ts';
import { App } from './App.tsx';
import { markSignedOut } from './hooks/session.ts';
import './styles.css';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A 4xx will answer the same again; a network failure or a 5xx gets one more try.
      retry: (failures, error) =>
        !(error instanceof ApiError && error.status >= 400 && error.status < 500) && failures < 1,
      staleTime: 5_000,
    },
    mutations: { retry: false },
  },
});

// A 401 from any call but the session probes: the session ended (expired, signed out elsewhere). Clearing it makes
// RequireAuth send the visitor to /sign-in, and back here after signing in.
setUnauthorizedHandler(() => markSignedOut(queryClient));

const container = document.getElementById('root');
if (!container) throw new Error('index.html has no #root');

createRoot(container).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <BrowserRouter>
        <App />
      </BrowserRouter>
    </QueryClientProvider>
  </StrictMode>,
);
