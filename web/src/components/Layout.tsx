// The signed-in frame: skip link, header with the primary navigation (and the API docs), the user's email and "Sign out".
// Below 720 px the navigation folds behind a "Menu" button (aria-expanded), and opens as a column.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type ReactNode } from 'react';
import { Link, Outlet, useLocation, useNavigate } from 'react-router';
import { api, API_DOCS_PATH } from '../api/client.ts';
import { markSignedOut, useCurrentUser } from '../hooks/session.ts';
import { classNames } from '../lib/format.ts';
import { Button } from './Button.tsx';

interface NavItem {
  to: string;
  label: string;
  /** Paths under this prefix mark the item as the current section. */
  section: string;
}

export function Layout({ children }: { children?: ReactNode }) {
  const user = useCurrentUser();
  const location = useLocation();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [menuOpen, setMenuOpen] = useState(false);

  useEffect(() => setMenuOpen(false), [location.pathname]);

  const signOut = useMutation({
    mutationFn: api.signOut,
    // Signed out on the server or not (a 401 means it already was), this browser's session is over.
    onSettled: () => {
      markSignedOut(queryClient);
      navigate('/sign-in', { replace: true });
    },
  });

  const items: NavItem[] = [
    { to: '/knowledge-bases', label: 'Knowledge bases', section: '/knowledge-bases' },
    { to: '/ask', label: 'Ask', section: '/ask' },
    { to: '/settings/api-keys', label: 'Settings', section: '/settings' },
  ];
  if (user.is_admin) items.push({ to: '/admin/users', label: 'Admin', section: '/admin' });
  const current = (item: NavItem) =>
    location.pathname === item.section ||
    location.pathname.startsWith(`${item.section}/`) ||
    (item.section === '/knowledge-bases' && location.pathname.startsWith('/documents/'));

  return (
    <div className="app">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="header">
        <div className="header__inner">
          <Link to="/knowledge-bases" className="brand">
            kbqa
          </Link>
          <button
            type="button"
            className="button button--ghost nav-toggle"
            aria-expanded={menuOpen}
            aria-controls="primary-nav"
            onClick={() => setMenuOpen((open) => !open)}
          >
            Menu
          </button>
          <div id="primary-nav" className={classNames('header__menu', menuOpen && 'header__menu--open')}>
            <nav aria-label="Main">
              <ul className="nav">
                {items.map((item) => (
                  <li key={item.to}>
                    <Link to={item.to} className="nav__link" aria-current={current(item) ? 'page' : undefined}>
                      {item.label}
                    </Link>
                  </li>
                ))}
                <li>
                  {/* A page of the server, not of the app: a plain link, not the router's. */}
                  <a href={API_DOCS_PATH} className="nav__link">
                    API docs
                  </a>
                </li>
              </ul>
            </nav>
            <div className="header__user">
              <span className="header__email" title={user.email}>
                {user.email}
              </span>
              <Button small onClick={() => signOut.mutate()} busy={signOut.isPending}>
                Sign out
              </Button>
            </div>
          </div>
        </div>
      </header>
      <main id="main" className="main" tabIndex={-1}>
        {children ?? <Outlet />}
      </main>
    </div>
  );
}

/** The frame of the signed-out pages: a centred card under the brand. */
export function PublicFrame({ children }: { children: ReactNode }) {
  return (
    <div className="public">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <main id="main" className="public__main" tabIndex={-1}>
        <p className="public__brand">kbqa</p>
        <div className="card public__card">{children}</div>
      </main>
    </div>
  );
}
